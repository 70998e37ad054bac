import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// `Tests/Peers/no_keyctl.c` — runs a command with keyctl(2), add_key(2) and request_key(2)
/// refused by a seccomp filter, as Docker's default profile does — compiled once per test
/// process into the build folder (a test leaves nothing in the temporary directory).
public enum NoKeyctl {
    private static let built: Result<URL, any Error> = Result {
        let folder = TestPaths.packageRoot.appendingPathComponent(".build/test-helpers")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let output = folder.appendingPathComponent("no-keyctl-\(getpid())")
        let source = TestPaths.packageRoot.appendingPathComponent("Tests/Peers/no_keyctl.c")
        let result = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/cc"), ["-O", "-o", output.path, source.path], timeout: 60)
        guard result.status == 0 else { throw HarnessError("cannot compile no_keyctl.c: \(result.stderr)") }
        // Renamed into place: a test process never runs a half-written helper.
        let final = folder.appendingPathComponent("no_keyctl")
        guard rename(output.path, final.path) == 0 else { throw HarnessError("cannot rename \(output.path)") }
        return final
    }

    /// The compiled helper: `no_keyctl COMMAND [ARG…]`.
    public static func build() throws -> URL { try built.get() }
}
