import Foundation
import Testing
import TestSupport
@testable import AuthKit

@Suite("RefreshLock")
struct RefreshLockTests {
    @Test("one holder at a time; the next gets it once the first releases")
    func exclusion() async throws {
        let directory = try TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let lock = try RefreshLock(group: "com.example.shared", environment: ["XDG_STATE_HOME": directory.path])
        #expect(lock.path == directory.path + "/authkit/locks/com.example.shared.lock")
        let first = try await lock.acquire()
        await #expect(throws: RefreshLock.Failure.timedOut(path: lock.path, seconds: 0)) {
            _ = try await lock.acquire(timeout: .milliseconds(200))
        }
        first.release()
        let second = try await lock.acquire(timeout: .seconds(5))
        second.release()

        // Where there is a runtime folder its lock is taken too (after the first): what an
        // agent of the first builds holds there, or a process whose HOME differs, excludes.
        let run = directory.appendingPathComponent("run")
        try FileManager.default.createDirectory(at: run, withIntermediateDirectories: true)
        let both = try RefreshLock(group: "g", environment: ["XDG_STATE_HOME": directory.path, "XDG_RUNTIME_DIR": run.path])
        #expect(both.path == directory.path + "/authkit/locks/g.lock" && both.runtimePath == run.path + "/authkit/g.lock")
        let old = try await RefreshLock(path: run.path + "/authkit/g.lock").acquire()
        await #expect(throws: RefreshLock.Failure.timedOut(path: run.path + "/authkit/g.lock", seconds: 0)) {
            _ = try await both.acquire(timeout: .milliseconds(200))
        }
        old.release()
        let held = try await both.acquire(timeout: .seconds(5))
        await #expect(throws: RefreshLock.Failure.self) { _ = try await RefreshLock(path: both.path).acquire(timeout: .milliseconds(100)) }
        held.release()
    }

    @Test("a holder killed with SIGKILL does not block the next one")
    func killedHolder() async throws {
        let directory = try TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let lock = try RefreshLock(group: "g", environment: ["XDG_STATE_HOME": directory.path])
        // One process that takes the lock and sleeps (flock(1) would hand it to a child) until it
        // is killed: a busy run once took longer than a 60 s sleep, and the lock was free again.
        let holder = try TestProcess(
            URL(fileURLWithPath: "/usr/bin/python3"),
            [
                "-c",
                "import fcntl, os, sys, time; fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT); "
                    + "fcntl.flock(fd, fcntl.LOCK_EX); print('held', flush=True); time.sleep(3600)", lock.path,
            ], stdout: .pipe)
        // Wait until the child says it holds it (however slowly a busy machine starts Python).
        #expect(try await offThePool { holder.firstStdoutLine(timeout: 60) } == "held")
        var held = false
        do { (try await lock.acquire(timeout: .milliseconds(20))).release() } catch { held = true }
        #expect(held, "the child holds the lock")
        holder.send(signal: SIGKILL)
        try await offThePool { holder.wait(timeout: 10) }
        let next = try await lock.acquire(timeout: .seconds(5))
        next.release()
    }

    @Test(
        "a private directory under XDG_STATE_HOME (else ~/.local/state), the same with or without XDG_RUNTIME_DIR; a shared one is refused"
    )
    func lockDirectory() throws {
        let directory = try TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let lock = try RefreshLock(group: "a/b c", environment: ["XDG_STATE_HOME": directory.path + "/state"])
        #expect(lock.path == "\(directory.path)/state/authkit/locks/a_b_c.lock")
        // A cron job (no XDG_RUNTIME_DIR) and the agent or a desktop shell (with one) share the
        // stores, so they must share the lock too.
        let session = try RefreshLock(
            group: "a/b c", environment: ["XDG_STATE_HOME": directory.path + "/state", "XDG_RUNTIME_DIR": directory.path + "/run"])
        #expect(session.path == lock.path)
        var info = stat()
        for path in ["/state", "/state/authkit", "/state/authkit/locks"] {
            #expect(stat(directory.path + path, &info) == 0)
            #expect(info.st_mode & 0o777 == 0o700, "\(path) is \(String(info.st_mode & 0o777, radix: 8))")
        }
        let home = try RefreshLock(group: "g", environment: ["HOME": directory.path + "/home"])
        #expect(home.path == "\(directory.path)/home/.local/state/authkit/locks/g.lock")

        // Only a home where the folder cannot be made at all (a service's user, whose home is
        // missing or read-only; here a file, which stops root too) uses the runtime folder.
        let file = directory.appendingPathComponent("not-a-folder")
        try "".write(to: file, atomically: false, encoding: .utf8)
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("run"), withIntermediateDirectories: true)
        let noHome = try RefreshLock(group: "g", environment: ["HOME": file.path, "XDG_RUNTIME_DIR": directory.path + "/run"])
        #expect(noHome.path == "\(directory.path)/run/authkit/g.lock")
        #expect(throws: RefreshLock.Failure.self) { _ = try RefreshLock(group: "g", environment: ["HOME": file.path]) }

        // Without XDG_RUNTIME_DIR (a cron job): logind's folder for the user, when it is ours
        // and private; else none.
        let sessionRoot = directory.path + "/run-user"
        try FileManager.default.createDirectory(atPath: sessionRoot + "/\(getuid())", withIntermediateDirectories: true)
        chmod(sessionRoot + "/\(getuid())", 0o700)
        let cron = try RefreshLock(group: "g", environment: ["XDG_STATE_HOME": directory.path + "/state"], sessionRoot: sessionRoot)
        #expect(cron.runtimePath == "\(sessionRoot)/\(getuid())/authkit/g.lock")
        chmod(sessionRoot + "/\(getuid())", 0o755)
        #expect(
            try RefreshLock(group: "g", environment: ["XDG_STATE_HOME": directory.path + "/state"], sessionRoot: sessionRoot).runtimePath
                == nil)
        #expect(
            try RefreshLock(group: "g", environment: ["XDG_STATE_HOME": directory.path + "/state"], sessionRoot: directory.path + "/none")
                .runtimePath == nil)

        let open = directory.appendingPathComponent("open")
        try FileManager.default.createDirectory(at: open.appendingPathComponent("authkit/locks"), withIntermediateDirectories: true)
        chmod(open.appendingPathComponent("authkit/locks").path, 0o777)
        #expect(throws: RefreshLock.Failure.self) { _ = try RefreshLock(group: "g", environment: ["XDG_STATE_HOME": open.path]) }
    }

    @Test("a home that is read-only now: a lock file made earlier is still locked; without one, no lock of another place")
    func readOnlyHome() async throws {
        let directory = try TestPaths.makeTemporaryDirectory()
        let environment = ["XDG_STATE_HOME": directory.path + "/state", "XDG_RUNTIME_DIR": directory.path + "/run"]
        try FileManager.default.createDirectory(atPath: directory.path + "/run", withIntermediateDirectories: true)
        let lock = try RefreshLock(group: "g", environment: environment)
        let locks = directory.path + "/state/authkit/locks"
        var failure: (any Error)?
        do {
            try await Self.readOnlyHome(lock, locks: locks, environment: environment, runtime: directory.path + "/run")
        } catch {
            failure = error
        }
        // Undone whatever happened above: nothing, even root, removes an immutable file.
        for path in [lock.path, locks] where getuid() == 0 {
            _ = try? await offThePool { try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/chattr"), ["-i", path], environment: [:]) }
        }
        chmod(locks, 0o700)
        chmod(lock.path, 0o600)
        try? FileManager.default.removeItem(at: directory)
        if let failure { throw failure }
    }

    private static func readOnlyHome(_ lock: RefreshLock, locks: String, environment: [String: String], runtime: String) async throws {
        try await lock.acquire().release()
        // Root writes through permissions, not through the immutable flag (ext4, tmpfs; not
        // every file system has it, and a container may lack the capability to set it).
        func makeReadOnly(_ path: String) async throws -> Bool {
            guard getuid() == 0 else { return chmod(path, 0o500) == 0 }
            let result = try await offThePool {
                try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/chattr"), ["+i", path], environment: [:])
            }
            return result.status == 0
        }
        guard try await makeReadOnly(lock.path), open(lock.path, O_RDWR | O_CLOEXEC) < 0 else {
            withKnownIssue("no immutable flag here (chattr +i)", isIntermittent: true) { throw HarnessError("chattr +i failed") }
            return
        }
        let held = try await lock.acquire()
        await #expect(throws: RefreshLock.Failure.timedOut(path: lock.path, seconds: 0), "opened read-only, it is still one lock") {
            try await RefreshLock(path: lock.path).acquire(timeout: .milliseconds(300)).release()
        }
        // Both locks are held: the runtime folder's too.
        let runtimeLock = try #require(lock.runtimePath)
        await #expect(throws: RefreshLock.Failure.timedOut(path: runtimeLock, seconds: 0)) {
            try await RefreshLock(path: runtimeLock).acquire(timeout: .milliseconds(300)).release()
        }
        held.release()

        // No lock file, and none can be made: an error, never the runtime lock alone, which a
        // cron job (no runtime folder) would not take.
        let other = try RefreshLock(group: "h", environment: environment)
        #expect(try await makeReadOnly(locks))
        await #expect(throws: RefreshLock.Failure.self) { try await other.acquire(timeout: .milliseconds(300)).release() }
        try await RefreshLock(path: runtime + "/authkit/h.lock").acquire(timeout: .milliseconds(300)).release()
    }
}
