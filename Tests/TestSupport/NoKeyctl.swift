import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// `Tests/Peers/no_keyctl.c` — runs a command with keyctl(2), add_key(2) and request_key(2)
/// refused by a seccomp filter, as Docker's default profile does — compiled once per test
/// process.
public enum NoKeyctl {
    private static let built: Result<URL, any Error> = Result {
        let output = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("authkit-no-keyctl-\(getpid())")
        let source = TestPaths.packageRoot.appendingPathComponent("Tests/Peers/no_keyctl.c")
        let result = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/cc"), ["-O", "-o", output.path, source.path], timeout: 60)
        guard result.status == 0 else { throw HarnessError("cannot compile no_keyctl.c: \(result.stderr)") }
        return output
    }

    /// The compiled helper: `no_keyctl COMMAND [ARG…]`.
    public static func build() throws -> URL { try built.get() }
}
