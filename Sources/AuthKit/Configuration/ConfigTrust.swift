#if canImport(Glibc)
import Glibc
#endif

/// Whether a configuration file may steer where tokens go, as OpenSSH decides for its own
/// files: the file and the directory holding it must belong to the caller (or root) and be
/// writable by nobody else. The whole file is refused, not just some keys: `issuer`,
/// `client_id`, `graph_url` and `scopes` each decide who receives a token, and a file anyone
/// else can write could set any of them (issue 15).
enum ConfigTrust {
    /// Why the file at `path` cannot be trusted, as a phrase with the fix; nil when it can.
    /// A symbolic link is followed: the file it reaches and that file's directory are checked,
    /// and so is the directory holding the link (which decides where the link points).
    static func problem(path: String, uid: uid_t = getuid()) -> String? {
        var checked: [String] = []
        let linkDirectory = directory(of: path)
        if let problem = check(linkDirectory, isDirectory: true, uid: uid) { return problem }
        checked.append(linkDirectory)
        guard let resolved = realPath(path) else { return nil }  // missing: read() reports it
        if let problem = check(resolved, isDirectory: false, uid: uid) { return problem }
        let resolvedDirectory = directory(of: resolved)
        if !checked.contains(resolvedDirectory), let problem = check(resolvedDirectory, isDirectory: true, uid: uid) {
            return problem
        }
        return nil
    }

    private static func check(_ path: String, isDirectory: Bool, uid: uid_t) -> String? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        let what = isDirectory ? "its directory \(path)" : "it"
        if info.st_uid != uid && info.st_uid != 0 {
            let owner = userName(info.st_uid) ?? "uid \(info.st_uid)"
            return "\(what) belongs to \(owner), so another user could change where your tokens go; "
                + "use a file of your own (or run chown \(userName(uid) ?? String(uid)) \(path))"
        }
        // A sticky directory (/tmp) lets others add files but not replace or remove ours.
        let sticky = isDirectory && info.st_mode & S_ISVTX != 0
        if info.st_mode & (S_IWGRP | S_IWOTH) != 0 && !sticky {
            let mode = String(info.st_mode & 0o7777, radix: 8)
            return "\(what) is writable by \(info.st_mode & S_IWOTH != 0 ? "every user" : "its group") (mode \(mode)), "
                + "so another user could change where your tokens go; run chmod go-w \(path)"
        }
        return nil
    }

    private static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        let directory = String(path[..<slash])
        return directory.isEmpty ? "/" : directory
    }

    private static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    private static func userName(_ uid: uid_t) -> String? {
        guard let entry = getpwuid(uid), let name = entry.pointee.pw_name else { return nil }
        return String(cString: name)
    }
}
