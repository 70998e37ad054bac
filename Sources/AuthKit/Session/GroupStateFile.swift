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
        if let state = environment["XDG_STATE_HOME"], state.hasPrefix("/") { return state + "/authkit/" + name }
        return UserHome.path(home: environment["HOME"]) + "/.local/state/authkit/" + name
    }

    /// Reads, changes and writes one group's value under an exclusive lock beside the file, so
    /// that two processes changing two groups at once lose neither line. `change` gets the
    /// current value (nil: no line) and returns the new one (nil: remove the line).
    static func update(_ path: String, group: String, _ change: (String?) -> String?) throws(Failure) {
        let (directory, name) = split(path)
        makeDirectories(directory)
        guard let folder = openTrustedDirectory(directory) else {
            throw Failure(path: directory, reason: "not a folder of this user's that only this user can write")
        }
        defer { close(folder) }
        let lock = openat(folder, name + ".lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard lock >= 0 else { throw Failure(path: path + ".lock", reason: String(cString: strerror(errno))) }
        defer { close(lock) }
        guard flock(lock, LOCK_EX) == 0 else { throw Failure(path: path + ".lock", reason: String(cString: strerror(errno))) }
        var lines = read(name, in: folder)
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
        let (directory, name) = split(path)
        guard let folder = openTrustedDirectory(directory) else { return [:] }
        defer { close(folder) }
        return read(name, in: folder)
    }

    private static func read(_ name: String, in folder: Int32) -> [String: String] {
        let fd = openat(folder, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { return [:] }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_uid == geteuid(), info.st_mode & 0o022 == 0,
            info.st_size <= 64 * 1024
        else { return [:] }
        var bytes = [UInt8](repeating: 0, count: Int(info.st_size))
        let count = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
        guard count >= 0 else { return [:] }
        var lines: [String: String] = [:]
        for line in String(decoding: bytes[..<count], as: UTF8.self).split(separator: "\n") {
            guard let space = line.firstIndex(of: " "), (try? SecretGroup(String(line[..<space]))) != nil else { continue }
            lines[String(line[..<space])] = String(line[line.index(after: space)...])
        }
        return lines
    }

    /// The folder, trusted by what the kernel says of the open descriptor: the user's own,
    /// writable by nobody else.
    private static func openTrustedDirectory(_ directory: String) -> Int32? {
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_uid == geteuid(), info.st_mode & 0o022 == 0 else {
            close(fd)
            return nil
        }
        return fd
    }

    private static func split(_ path: String) -> (directory: String, name: String) {
        guard let slash = path.lastIndex(of: "/") else { return (".", path) }
        return (String(path[..<slash]), String(path[path.index(after: slash)...]))
    }

    private static func makeDirectories(_ directory: String) {
        var path = ""
        for part in directory.split(separator: "/") {
            path += "/" + part
            mkdir(path, 0o700)
        }
    }
}
