import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// No neighbour can break the refresh lock. The first builds fell back to the
/// predictable `/tmp/authkit-<uid>` when `XDG_RUNTIME_DIR` is unset (cron, plain SSH); another
/// user who created it first made every refresh, login and logout fail. Now the lock lives in
/// the user's own `~/.local/state`.
@Suite struct LockDirectoryTests {
    @Test func anotherUsersDirectoryAtTheOldPlaceChangesNothing() throws {
        if let reason = UnprivilegedUser.unavailableReason {
            withKnownIssue("needs the unprivileged test user: \(reason)", isIntermittent: true) { throw HarnessError(reason) }
            return
        }
        let home = try UnprivilegedUser.makeHome()
        defer { try? FileManager.default.removeItem(at: home.deletingLastPathComponent()) }
        // "Another user" (root here) takes the old predictable name first.
        let squatted = "/tmp/authkit-\(UnprivilegedUser.uid)"
        let created = mkdir(squatted, 0o755) == 0
        defer { if created { rmdir(squatted) } }
        var info = stat()
        #expect(stat(squatted, &info) == 0 && info.st_uid != UnprivilegedUser.uid)

        let environment = ["HOME": home.path, "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"]
        // logout takes the group's lock (with the plain-file store: no session bus needed).
        let logout = try UnprivilegedUser.run(
            TestPaths.product("authkit"), ["logout", "--insecure-storage", "--group", "com.example.lock"], environment: environment)
        #expect(logout.status == 0, "\(logout.status): \(logout.stderr)")
        let lockDirectory = home.path + "/.local/state/authkit/locks"
        #expect(stat(lockDirectory, &info) == 0, "no lock directory in the user's home")
        #expect(info.st_uid == UnprivilegedUser.uid && info.st_mode & 0o777 == 0o700)
        #expect(FileManager.default.fileExists(atPath: lockDirectory + "/com.example.lock.lock"))
    }
}
