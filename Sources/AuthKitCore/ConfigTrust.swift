#if hasFeature(Embedded)
import CLibc
#elseif canImport(Glibc)
import Glibc
#endif

/// Whether a configuration file may steer where tokens go, decided as OpenSSH decides for its
/// own files, and from what the kernel says about the **open** descriptor, never from a path
/// checked before or after the read:
///
/// * the file read (`fstat` of the open descriptor) is a regular file of the caller's (or
///   root's) that nobody else can write;
/// * every directory the path passes through — each one that holds a component or a symbolic
///   link of the path, from the user's home down (as OpenSSH: above the home they are the
///   system's), or from `/` for a path outside it — belongs to the caller or root and is
///   writable by nobody else (a sticky directory such as /tmp may be: others can add entries
///   there but not replace ours — and a link in it must be the caller's or root's);
/// * the path, so resolved, leads to the very file that was read (same device and inode), so a
///   path swapped between the open and the check is refused;
/// * anything that cannot be checked (a deleted file, a `stat` that fails, a loop of links)
///   refuses the file: the check fails closed.
///
/// The whole file is refused, not just some keys: `issuer`, `client_id`, `graph_url` and
/// `scopes` each decide who receives a token, and a file anyone else can write could set any
/// of them.
package enum ConfigTrust {
    /// Why the file opened as `fd` from `path` cannot be trusted, as a phrase with the fix;
    /// nil when it can.
    package static func problem(descriptor fd: Int32, path: String, uid: uid_t = getuid()) -> String? {
        var opened = stat()
        guard fstat(fd, &opened) == 0 else { return "it cannot be checked (\(String(cString: strerror(errno))))" }
        guard opened.st_mode & S_IFMT == S_IFREG else { return "it is not a regular file" }
        if let problem = check(opened, what: "it", path: path, uid: uid) { return problem }
        let resolved: String
        switch walk(path, uid: uid) {
        case .failure(let problem): return problem
        case .success(let end): resolved = end
        }
        var atPath = stat()
        guard stat(resolved, &atPath) == 0, atPath.st_dev == opened.st_dev, atPath.st_ino == opened.st_ino else {
            return "the file at \(path) changed while it was read (or was deleted), so it cannot be checked; try again"
        }
        return nil
    }

    /// Opens `path` and checks it (tests and callers that only ask).
    package static func problem(path: String, uid: uid_t = getuid()) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
        guard fd >= 0 else { return "it cannot be opened (\(String(cString: strerror(errno))))" }
        defer { close(fd) }
        return problem(descriptor: fd, path: path, uid: uid)
    }

    private enum Walk { case success(String), failure(String) }

    /// Follows `path` one component at a time, as the kernel would, checking each directory
    /// it passes through (the one holding each entry, the link's directory for a link).
    /// Returns the path of the final entry with every link resolved.
    private static func walk(_ path: String, uid: uid_t) -> Walk {
        var absolute = path
        if !path.hasPrefix("/") {
            // A relative path: walked from / through the current directory, like any other.
            guard let cwd = getcwd(nil, 0) else { return .failure("the current directory cannot be checked") }
            absolute = String(cString: cwd) + "/" + path
            free(cwd)
        }
        var pending: [Substring] = absolute.split(separator: "/").reversed()
        var current = "/"
        // As OpenSSH: the directories above the user's home are the system's business (in a
        // container they may show as another user's); the home and everything below it count.
        let home = homeDirectory(uid)
        var links = 0
        while let component = pending.popLast() {
            if component == "." { continue }
            if component == ".." {
                current = parent(of: current)
                continue
            }
            var directory = stat()
            guard stat(current, &directory) == 0 else {
                return .failure("its directory \(current) cannot be checked (\(String(cString: strerror(errno))))")
            }
            let aboveHome = home.map { $0 != current && (current == "/" || $0.hasPrefix(current + "/")) } ?? false
            if !aboveHome, let problem = check(directory, what: "its directory \(current)", path: current, uid: uid, directory: true) {
                return .failure(problem)
            }
            let next = current == "/" ? "/" + component : current + "/" + component
            var entry = stat()
            guard lstat(next, &entry) == 0 else {
                return .failure("\(next) cannot be checked (\(String(cString: strerror(errno))))")
            }
            guard entry.st_mode & S_IFMT == S_IFLNK else {
                current = next
                continue
            }
            links += 1
            guard links <= 40, let target = readLink(next) else {
                return .failure("the symbolic link \(next) cannot be followed")
            }
            // In a directory others may write to (a sticky one such as /tmp), a link is theirs
            // to point anywhere unless it is ours.
            if directory.st_mode & (S_IWGRP | S_IWOTH) != 0, entry.st_uid != uid, entry.st_uid != 0 {
                return .failure(
                    "the symbolic link \(next) belongs to \(userName(entry.st_uid) ?? "uid \(entry.st_uid)"), "
                        + "so another user decides where it points; use a path of your own")
            }
            if target.hasPrefix("/") { current = "/" }
            pending.append(contentsOf: target.split(separator: "/").reversed())
        }
        return .success(current)
    }

    private static func check(_ info: stat, what: String, path: String, uid: uid_t, directory: Bool = false) -> String? {
        if info.st_uid != uid && info.st_uid != 0 {
            let owner = userName(info.st_uid) ?? "uid \(info.st_uid)"
            return "\(what) belongs to \(owner), so another user could change where your tokens go; "
                + "use a file of your own (or run chown \(userName(uid) ?? String(uid)) \(path))"
        }
        // A sticky directory (/tmp) lets others add files but not replace or remove ours.
        let sticky = directory && info.st_mode & S_ISVTX != 0
        if info.st_mode & (S_IWGRP | S_IWOTH) != 0 && !sticky {
            let mode = String(info.st_mode & 0o7777, radix: 8)
            return "\(what) is writable by \(info.st_mode & S_IWOTH != 0 ? "every user" : "its group") (mode \(mode)), "
                + "so another user could change where your tokens go; run chmod go-w \(path)"
        }
        return nil
    }

    /// The user's home directory with its links resolved, or nil when it has none.
    private static func homeDirectory(_ uid: uid_t) -> String? {
        guard let entry = getpwuid(uid), let directory = entry.pointee.pw_dir, let resolved = realpath(directory, nil) else { return nil }
        defer { free(resolved) }
        let home = String(cString: resolved)
        return home == "/" ? nil : home
    }

    private static func parent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return "/" }
        return String(path[..<slash])
    }

    private static func readLink(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: 4096)
        let count = readlink(path, &buffer, buffer.count)
        guard count > 0, count < buffer.count else { return nil }
        return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private static func userName(_ uid: uid_t) -> String? {
        guard let entry = getpwuid(uid), let name = entry.pointee.pw_name else { return nil }
        return String(cString: name)
    }
}
