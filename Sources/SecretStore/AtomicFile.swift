#if canImport(Glibc)
import Glibc
#endif

/// The one atomic file writer of the package (the plain-file store, `setup`'s config files):
/// a new file beside the old one, written, flushed, renamed over it and the rename flushed —
/// readers see the old file or the new one, never half of either, and a crash leaves one of
/// the two.
package enum AtomicFile {
    /// Why a write failed: the step, the path and the kernel's reason.
    package struct Failure: Error, Equatable {
        package var path: String
        package var operation: String
        package var errno: Int32
        /// Said instead of the kernel's reason, when the refusal is the writer's own.
        package var detail: String? = nil

        package var reason: String { detail ?? String(cString: strerror(errno)) }
    }

    /// Replaces `path` with `bytes`. The new file gets `mode`, or the existing file's mode when
    /// `keepingMode` and there is one. A symbolic link at the temporary name is never followed.
    ///
    /// `throughLinks`: when `path` is a symbolic link (a dotfile kept elsewhere), the file it
    /// names is replaced, in that file's folder, and the link stays; a link to anything but a
    /// regular file (a device, a folder, /dev/null) is refused. Otherwise the link itself is
    /// replaced, as rename(2) does.
    package static func write(
        _ bytes: [UInt8], to path: String, mode: mode_t, keepingMode: Bool = false, throughLinks: Bool = false
    ) throws(Failure) {
        let path = throughLinks ? try linkTarget(of: path) : path
        var info = stat()
        let finalMode = keepingMode && stat(path, &info) == 0 ? info.st_mode & 0o7777 : mode
        let directory = Self.directory(of: path)
        let name = path.lastIndex(of: "/").map { path[path.index(after: $0)...] } ?? path[...]
        let temporary = directory + "/." + name + ".tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw Failure(path: temporary, operation: "create", errno: errno) }
        var failure: Failure?
        var written = 0
        while written < bytes.count {
            let count = bytes[written...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                failure = Failure(path: temporary, operation: "write", errno: errno)
                break
            }
            written += count
        }
        if failure == nil, fchmod(fd, finalMode) != 0 { failure = Failure(path: temporary, operation: "set the mode of", errno: errno) }
        if failure == nil, fsync(fd) != 0 { failure = Failure(path: temporary, operation: "flush", errno: errno) }
        close(fd)
        if failure == nil, rename(temporary, path) != 0 { failure = Failure(path: path, operation: "replace", errno: errno) }
        if let failure {
            unlink(temporary)
            throw failure
        }
        // The rename itself made durable.
        let directoryFD = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard directoryFD >= 0 else { throw Failure(path: directory, operation: "open", errno: errno) }
        defer { close(directoryFD) }
        guard fsync(directoryFD) == 0 else { throw Failure(path: directory, operation: "flush", errno: errno) }
    }

    /// The file `path` finally names: itself unless it is a symbolic link, else the end of the
    /// chain of links (a relative target read from its link's folder). The end may not exist
    /// yet (a link to a file still to be made); when it exists it must be a regular file.
    ///
    /// Run as root, every folder and link on the way, and the file, must belong to root, and
    /// no folder may be writable by others (a sticky one only where what it holds is root's),
    /// as the kernel says of each, opened without following it: else their owner could point
    /// root's write at a file of their choosing (`setup` run with another user's `HOME`, as
    /// `su` without `-` leaves it). Another user's own folders (an NFS home, a toolbox) are
    /// theirs to trust.
    package static func linkTarget(of path: String) throws(Failure) -> String {
        var pending = try components(of: path)
        var resolved: [String] = []
        var folder = open("/", openPath | O_DIRECTORY | O_CLOEXEC)
        guard folder >= 0 else { throw Failure(path: "/", operation: "open", errno: errno) }
        defer { close(folder) }
        let strict = geteuid() == 0
        var folderInfo = stat()
        folderInfo.st_mode = S_IFDIR | 0o755
        var links = 0
        while !pending.isEmpty {
            let name = pending.removeFirst()
            if name == "." { continue }
            let fd = openat(folder, name, openPath | O_NOFOLLOW | O_CLOEXEC)
            guard fd >= 0 else {
                // Not there (yet): the rest is made by the write, or the write says why not —
                // by root only in a folder nobody else can add to.
                guard errno == ENOENT else { throw Failure(path: join(resolved + [name]), operation: "look at", errno: errno) }
                if strict, othersMayAdd(to: folderInfo) { throw refused(path, join(resolved), "others may write in it") }
                return join(resolved + [name] + pending)
            }
            var info = stat()
            guard fstat(fd, &info) == 0 else {
                let failure = Failure(path: join(resolved + [name]), operation: "look at", errno: errno)
                close(fd)
                throw failure
            }
            let here = resolved + [name]
            if strict {
                var reason: String?
                if info.st_uid != 0 {
                    reason = "it belongs to another user (uid \(info.st_uid))"
                } else if info.st_mode & S_IFMT == S_IFDIR, othersMayAdd(to: info), info.st_mode & S_ISVTX == 0 {
                    // (In a sticky folder, others cannot move what is root's.)
                    reason = "others may write in it"
                }
                if let reason {
                    close(fd)
                    throw refused(path, join(here), reason)
                }
            }
            switch info.st_mode & S_IFMT {
            case S_IFLNK:
                links += 1
                var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
                let count = readlinkat(fd, "", &buffer, buffer.count - 1)
                close(fd)
                // As many links as the kernel follows in one path (MAXSYMLINKS).
                guard links <= 40 else { throw Failure(path: path, operation: "follow the links of", errno: ELOOP) }
                guard count > 0 else { throw Failure(path: join(here), operation: "read the link", errno: errno) }
                let target = String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
                if target.hasPrefix("/") {
                    let root = open("/", openPath | O_DIRECTORY | O_CLOEXEC)
                    guard root >= 0 else { throw Failure(path: "/", operation: "open", errno: errno) }
                    close(folder)
                    folder = root
                    folderInfo.st_mode = S_IFDIR | 0o755
                    folderInfo.st_gid = 0
                    resolved = []
                }
                pending = try components(of: target, absolute: false) + pending
            case S_IFDIR where !pending.isEmpty:
                close(folder)
                folder = fd
                folderInfo = info
                resolved.append(name)
            case S_IFREG where pending.isEmpty:
                close(fd)
                return join(here)
            default:
                close(fd)
                throw Failure(
                    path: join(here), operation: "write", errno: EINVAL,
                    detail: "\(path) leads to it, and it is not a regular file; point the link at a file, or remove it")
            }
        }
        return join(resolved)
    }

    /// Whether users other than root may add to a folder: writable by everybody, or by a group
    /// other than root's.
    private static func othersMayAdd(to folder: stat) -> Bool {
        folder.st_mode & 0o002 != 0 || (folder.st_mode & 0o020 != 0 && folder.st_gid != 0)
    }

    /// Root's write refused because of `place` on the way to `path`.
    private static func refused(_ path: String, _ place: String, _ reason: String) -> Failure {
        Failure(
            path: path, operation: "write", errno: EPERM,
            detail:
                "\(place) is on the way, and \(reason), so root does not write through it; run authkit setup as the user whose files these are"
        )
    }

    /// A path's names, from the root (a relative path from the working folder), with `..`
    /// taken lexically as the kernel takes it only after links: kept, for `openat`.
    private static func components(of path: String, absolute: Bool = true) throws(Failure) -> [String] {
        var whole = path
        if absolute, !path.hasPrefix("/") {
            var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            guard getcwd(&buffer, buffer.count) != nil else {
                throw Failure(path: ".", operation: "find the working folder of", errno: errno)
            }
            whole = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) + "/" + path
        }
        return whole.split(separator: "/").map(String.init)
    }

    private static func join(_ names: [String]) -> String { "/" + names.joined(separator: "/") }

    /// `O_PATH` (Linux, the same on every architecture authkit builds for), which Glibc's
    /// module leaves out without `_GNU_SOURCE`: a descriptor that names a file without
    /// opening it, a link included with `O_NOFOLLOW`.
    private static let openPath: Int32 = 0o10000000

    static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }
}
