import AuthKitCore
import SecretStore

#if canImport(Glibc)
import Glibc
#endif

/// A small file of authkit's own state, one line per group — `<group> <value>` — in
/// `$XDG_STATE_HOME/authkit/` (else `~/.local/state/authkit/`): mode 0600, changed under a
/// lock beside it (`NAME.lock`), written with ``AtomicFile``. It holds no secret, and it is
/// trusted only when the open folder and the open file are the user's own and nobody else
/// may write them (checked on the open descriptors, never by path). ``StorageRecord`` and
/// ``LoginRecord`` are two such files.
enum GroupStateFile {
    /// Why the file could not be written (logged by the caller; never fatal).
    struct Failure: Error {
        var path: String
        var reason: String
    }

    /// The file called `name` in authkit's state folder.
    static func path(_ name: String, environment: [String: String]) -> String {
        UserFiles.statePath(name, environment: environment) { UserHome.path(home: environment["HOME"]) }
    }

    /// Reads, changes and writes one group's value under an exclusive lock beside the file, so
    /// that two processes changing two groups at once lose neither line. `change` gets the
    /// current value (nil: no line) and returns the new one (nil: remove the line).
    static func update(_ path: String, group: String, _ change: (String?) -> String?) throws(Failure) {
        let (directory, name) = GroupStateLines.split(path)
        makeDirectories(directory)
        guard let folder = GroupStateLines.openTrustedDirectory(directory) else {
            throw Failure(path: directory, reason: "not a folder of this user's that only this user can write")
        }
        defer { close(folder) }
        let lock = openat(folder, name + ".lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard lock >= 0 else { throw Failure(path: path + ".lock", reason: String(cString: strerror(errno))) }
        defer { close(lock) }
        guard flock(lock, LOCK_EX) == 0 else { throw Failure(path: path + ".lock", reason: String(cString: strerror(errno))) }
        var lines = GroupStateLines.read(name, in: folder, isGroup: isGroup)
        let wanted = change(lines[group])
        guard lines[group] != wanted else { return }
        lines[group] = wanted
        let text = lines.keys.sorted().map { "\($0) \(lines[$0] ?? "")\n" }.joined()
        do { try AtomicFile.write(Array(text.utf8), to: path, mode: 0o600) } catch {
            throw Failure(path: error.path, reason: error.reason)
        }
    }

    /// Each group's value; nothing when the folder or the file itself is not the user's own
    /// and writable by the user alone, when it is over 64 KiB, or missing. Lines whose first
    /// word is not a group name are skipped.
    static func lines(_ path: String) -> [String: String] {
        GroupStateLines.read(path, isGroup: isGroup)
    }

    /// A line's first word names a group when the stores take it as one.
    private static func isGroup(_ word: String) -> Bool { (try? SecretGroup(word)) != nil }

    private static func makeDirectories(_ directory: String) {
        var path = ""
        for part in directory.split(separator: "/") {
            path += "/" + part
            mkdir(path, 0o700)
        }
    }
}
