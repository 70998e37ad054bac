import SecretStore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#endif

/// The cross-process lock that makes one refresh at a time per group: `flock(2)` on
/// `$XDG_STATE_HOME/authkit/locks/<group>.lock` (by default under `~/.local/state`), a 0700
/// directory in the user's own home. One place whatever the session: a cron job or a plain SSH
/// session has no `XDG_RUNTIME_DIR` while the agent and a desktop shell do, and they share the
/// same stores, so a lock that moved with it would let two of them spend one rotated refresh
/// token.
///
/// The kernel releases a `flock` when its holder exits, however it exits: a process killed
/// with SIGKILL while refreshing does not block the next one. The directory must belong to
/// this user and not be writable by anyone else, so another user cannot plant the lock file
/// (or a symlink) to block or redirect it.
public struct RefreshLock: Sendable {
    /// Why the group's refresh lock could not be taken.
    public enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// The lock directory could not be made private or used.
        case directory(path: String, reason: String)
        /// The lock file could not be opened.
        case file(path: String, reason: String)
        /// Another process held the lock longer than the wait allows.
        case timedOut(path: String, seconds: Int)

        public var description: String {
            switch self {
            case .directory(let path, let reason): return "cannot use the lock directory \(path): \(reason)"
            case .file(let path, let reason): return "cannot open the lock file \(path): \(reason)"
            case .timedOut(let path, let seconds):
                return "another authkit process held \(path) for more than \(seconds) s; try again"
            }
        }
    }

    /// The lock file's path.
    package let path: String
    /// Also taken, after ``path``, where there is a runtime folder: `$XDG_RUNTIME_DIR/authkit/<group>.lock`,
    /// where the first builds kept the lock (an agent of theirs may still run) and which every
    /// process of a login session shares even when their `HOME` or `XDG_STATE_HOME` differ.
    /// A process without `XDG_RUNTIME_DIR` (a cron job) takes the one in logind's folder for the
    /// user, `/run/user/<uid>`, where there is one: so it also excludes a process that could
    /// take only the runtime lock (its home read-only, the state folder never made).
    package let runtimePath: String?

    /// The lock for `group`, in the directory this environment calls for. `sessionRoot`:
    /// where logind keeps the users' runtime folders (tests).
    package init(group: String, environment: [String: String], sessionRoot: String = "/run/user") throws(Failure) {
        let directory = try Self.directory(environment: environment, sessionRoot: sessionRoot)
        path = directory + "/" + Self.fileName(group: group)
        let runtime = (try? Self.runtimeDirectory(environment: environment, sessionRoot: sessionRoot)).map {
            $0 + "/" + Self.fileName(group: group)
        }
        runtimePath = runtime == path ? nil : runtime
    }

    /// A lock at an explicit path (tests).
    package init(path: String) {
        self.path = path
        runtimePath = nil
    }

    /// Runs `body` while holding the lock, waiting at most `timeout` to get it.
    /// The wait happens off the cooperative thread pool.
    package func withLock<T: Sendable, E: Error>(
        timeout: Duration = .seconds(60), _ body: () async throws(E) -> T
    ) async throws -> T {
        let held = try await acquire(timeout: timeout)
        defer { held.release() }
        return try await body()
    }

    /// Takes the lock (``path``, then ``runtimePath``: always in this order, so two processes
    /// never wait for each other). Release it with ``Held/release()`` (or let the process end).
    package func acquire(timeout: Duration = .seconds(60)) async throws(Failure) -> Held {
        let deadline = ContinuousClock.now + timeout
        // No fallback when this one cannot be taken: a cron job takes only this lock, so a
        // process that took only the runtime one could spend the same refresh token.
        let first = try await Self.take(path, timeout: timeout)
        guard let runtimePath else { return first }
        do {
            let second = try await Self.take(runtimePath, timeout: max(.zero, deadline - ContinuousClock.now))
            return Held(fds: first.fds + second.fds)
        } catch .timedOut(let path, _) {
            first.release()
            throw .timedOut(path: path, seconds: Int(timeout.components.seconds))
        } catch {
            // A runtime folder that cannot hold a lock file only loses the sharing it adds.
            return first
        }
    }

    private static func take(_ path: String, timeout: Duration) async throws(Failure) -> Held {
        var fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0o600)
        let failure = errno
        // A local flock needs no write access: a lock file made earlier is still locked from a
        // home that is read-only now (EROFS; EACCES, EPERM: a file that may not be written).
        // (Over NFS an exclusive lock needs a file open for writing: flock then fails below.)
        if fd < 0, failure == EROFS || failure == EACCES || failure == EPERM {
            fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        }
        guard fd >= 0 else { throw .file(path: path, reason: String(cString: strerror(failure))) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            close(fd)
            throw .file(path: path, reason: "it is not a regular file")
        }
        if flock(fd, LOCK_EX | LOCK_NB) == 0 { return Held(fds: [fd]) }
        guard errno == EWOULDBLOCK || errno == EINTR else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw .file(path: path, reason: reason)
        }
        // Poll rather than block: a blocking flock cannot be cancelled or bounded.
        let deadline = ContinuousClock.now + timeout
        var pause = Duration.milliseconds(5)
        while ContinuousClock.now < deadline {
            if Task.isCancelled { break }
            try? await Task.sleep(for: pause)
            if flock(fd, LOCK_EX | LOCK_NB) == 0 { return Held(fds: [fd]) }
            pause = min(pause * 2, .milliseconds(50))
        }
        close(fd)
        throw .timedOut(path: path, seconds: Int(timeout.components.seconds))
    }

    /// A held lock.
    package final class Held: Sendable {
        let fds: [Int32]
        init(fds: [Int32]) { self.fds = fds }

        /// Releases the lock (closing the descriptors releases the flocks).
        package func release() {
            for fd in fds.reversed() { close(fd) }
        }
    }

    /// `<group>.lock`, with anything but letters, digits, `.`, `_`, `-` replaced.
    static func fileName(group: String) -> String {
        let safe = group.unicodeScalars.map { scalar -> Character in
            (scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar))) || "._-".unicodeScalars.contains(scalar)
                ? Character(scalar) : "_"
        }
        return String(safe) + ".lock"
    }

    /// `$XDG_STATE_HOME/authkit/locks` (by default `~/.local/state/authkit/locks`), whether or
    /// not `XDG_RUNTIME_DIR` is set: a place only this user can create, made 0700 where missing
    /// and checked to be ours and private. (Not a predictable name under /tmp, where another
    /// user could create it first and block every refresh.) Only where that folder cannot be
    /// made at all (no home, a read-only one, as for a service's user) is
    /// `$XDG_RUNTIME_DIR/authkit` used: then no process of the user can make it either.
    static func directory(environment: [String: String], sessionRoot: String = "/run/user") throws(Failure) -> String {
        let path: String
        do throws(Failure) {
            path = try stateDirectory(environment: environment)
        } catch {
            guard let runtime = try? runtimeDirectory(environment: environment, sessionRoot: sessionRoot) else { throw error }
            return runtime
        }
        return try checked(path)
    }

    /// `$XDG_RUNTIME_DIR/authkit` — without that variable, `/run/user/<uid>/authkit` where
    /// logind made `/run/user/<uid>` (ours, private) — made where missing and checked; nil
    /// without a runtime folder.
    static func runtimeDirectory(environment: [String: String], sessionRoot: String = "/run/user") throws(Failure) -> String? {
        let runtime: String
        if let named = environment["XDG_RUNTIME_DIR"], named.hasPrefix("/") {
            runtime = named
        } else {
            runtime = sessionRoot + "/\(getuid())"
            var info = stat()
            guard lstat(runtime, &info) == 0, info.st_mode & S_IFMT == S_IFDIR, info.st_uid == getuid(), info.st_mode & 0o077 == 0
            else { return nil }
        }
        let path = runtime + "/authkit"
        if mkdir(path, 0o700) != 0 && errno != EEXIST { throw .directory(path: path, reason: String(cString: strerror(errno))) }
        return try checked(path)
    }

    /// `$XDG_STATE_HOME/authkit/locks` or `~/.local/state/authkit/locks`, made where missing.
    private static func stateDirectory(environment: [String: String]) throws(Failure) -> String {
        let state: String
        if let explicit = environment["XDG_STATE_HOME"], explicit.hasPrefix("/") {
            state = explicit
        } else if case let home = UserHome.path(home: environment["HOME"]), !home.isEmpty {
            state = home + "/.local/state"
        } else {
            throw .directory(path: "~/.local/state/authkit/locks", reason: "neither XDG_STATE_HOME nor HOME is set")
        }
        var path = ""
        for component in (state + "/authkit/locks").split(separator: "/") {
            path += "/" + component
            if mkdir(path, 0o700) != 0 && errno != EEXIST {
                throw .directory(path: path, reason: String(cString: strerror(errno)))
            }
        }
        return path
    }

    /// `path` if it is a directory of ours that nobody else can write.
    private static func checked(_ path: String) throws(Failure) -> String {
        var info = stat()
        guard lstat(path, &info) == 0 else { throw .directory(path: path, reason: String(cString: strerror(errno))) }
        guard info.st_mode & S_IFMT == S_IFDIR else { throw .directory(path: path, reason: "it is not a directory") }
        guard info.st_uid == getuid() else { throw .directory(path: path, reason: "it belongs to another user") }
        guard info.st_mode & 0o022 == 0 else {
            throw .directory(path: path, reason: "others can write to it; run chmod 700 \(path)")
        }
        return path
    }
}
