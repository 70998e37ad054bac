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
    package static func linkTarget(of path: String) throws(Failure) -> String {
        var current = path
        // As many links as the kernel follows in one path (MAXSYMLINKS).
        for _ in 0..<40 {
            var info = stat()
            guard lstat(current, &info) == 0 else {
                guard errno == ENOENT else { throw Failure(path: current, operation: "look at", errno: errno) }
                return current
            }
            switch info.st_mode & S_IFMT {
            case S_IFREG: return current
            case S_IFLNK: break
            default:
                throw Failure(
                    path: current, operation: "write", errno: EINVAL,
                    detail: "\(path) links to it, and it is not a regular file; point the link at a file, or remove it")
            }
            var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            let count = readlink(current, &buffer, buffer.count - 1)
            guard count > 0 else { throw Failure(path: current, operation: "read the link", errno: errno) }
            let target = String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            current = target.hasPrefix("/") ? target : directory(of: current) + "/" + target
        }
        throw Failure(path: path, operation: "follow the links of", errno: ELOOP)
    }

    static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }
}
