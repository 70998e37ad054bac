import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// `authkit-test`, the unprivileged account `scripts/bootstrap` creates when run as root (as
/// CI does), for the tests where root behaves differently: file ownership, kernel key quotas,
/// another user's files. Tests skip (with the reason) where it is not available.
public enum UnprivilegedUser {
    public static let name = "authkit-test"

    /// Why the user cannot be used here, or nil when it can.
    public static var unavailableReason: String? {
        guard getuid() == 0 else { return "the tests do not run as root (CI does), so they cannot switch to \(name)" }
        guard getpwnam(name) != nil else { return "the user \(name) does not exist: run ./scripts/bootstrap as root" }
        return nil
    }

    public static var uid: uid_t { getpwnam(name)?.pointee.pw_uid ?? 0 }
    public static var gid: gid_t { getpwnam(name)?.pointee.pw_gid ?? 0 }

    /// A fresh directory owned by the user (mode 0700), for its HOME and state.
    public static func makeHome() throws -> URL {
        let directory = try TestPaths.makeTemporaryDirectory(prefix: "authkit-user")
        chmod(directory.path, 0o755)  // the parent is root's; the user needs to enter it
        let home = directory.appendingPathComponent("home")
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: false)
        guard chown(home.path, uid, gid) == 0, chmod(home.path, 0o700) == 0 else {
            throw HarnessError("cannot give \(home.path) to \(name): \(String(cString: strerror(errno)))")
        }
        return home
    }

    /// Runs `executable` as the user with exactly `environment` (nothing of the caller's).
    /// An executable of the checkout runs from a copy the user can reach: a checkout lives in a
    /// folder only its owner may enter (a 0700 home, `mktemp -d`).
    public static func run(
        _ executable: URL, _ arguments: [String], environment: [String: String], stdin: String? = nil, timeout: TimeInterval = 60
    ) throws -> ProcessResult {
        let reachable = try ReachableCopy(of: executable)
        defer { reachable.remove() }
        let assignments = environment.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        return try ProcessRunner.run(
            URL(fileURLWithPath: "/usr/bin/setpriv"),
            ["--reuid=\(name)", "--regid=\(name)", "--init-groups", "/usr/bin/env", "-i"] + assignments + [reachable.url.path] + arguments,
            environment: [:], stdin: stdin, timeout: timeout)
    }
}

/// A test precondition that failed, with what to do about it.
public struct HarnessError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
