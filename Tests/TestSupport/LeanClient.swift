import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The lean client, `authkit-lean` (Lean/, Embedded Swift), built once per test process by
/// `scripts/build-lean` beside the `authkit` the tests run (SwiftPM does not build it).
public enum LeanClient {
    private static let built: Result<URL, any Error> = Result {
        let script = TestPaths.packageRoot.appendingPathComponent("scripts/build-lean")
        let result = try ProcessRunner.run(
            script, ["debug"], environment: ProcessInfo.processInfo.environment, timeout: 300)
        guard result.status == 0, let printed = result.stdout.split(separator: "\n").last else {
            throw HarnessError("scripts/build-lean failed (\(result.status)): \(result.stderr.suffix(2000))")
        }
        let path = String(printed)
        let built = URL(fileURLWithPath: path.hasPrefix("/") ? path : TestPaths.packageRoot.path + "/" + path)
        let wanted = TestPaths.product("authkit-lean")
        // Beside the authkit the tests run, which it hands commands to.
        if built.standardizedFileURL.path != wanted.standardizedFileURL.path {
            let staging = wanted.deletingLastPathComponent().appendingPathComponent("authkit-lean.\(getpid())")
            try? FileManager.default.removeItem(at: staging)
            try FileManager.default.copyItem(at: built, to: staging)
            guard rename(staging.path, wanted.path) == 0 else { throw HarnessError("cannot rename \(staging.path)") }
        }
        return wanted
    }

    /// The built lean client, beside `TestPaths.product("authkit")`.
    public static func build() throws -> URL { try built.get() }
}
