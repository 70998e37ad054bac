#if hasFeature(Embedded)
import CLibc
#elseif canImport(Glibc)
import Glibc
#endif

/// Reading a small file of authkit's own state, one line per group — `<group> <value>`: each
/// group's value, trusted only when the open folder and the open file are the user's own and
/// nobody else may write them (checked on the open descriptors, never by path).
package enum GroupStateLines {
    /// Each group's value; nothing when the folder or the file itself is not the user's own
    /// and writable by the user alone, when it is over 64 KiB, or missing. Lines whose first
    /// word `isGroup` refuses are skipped.
    package static func read(_ path: String, isGroup: (String) -> Bool) -> [String: String] {
        let (directory, name) = split(path)
        guard let folder = openTrustedDirectory(directory) else { return [:] }
        defer { close(folder) }
        return read(name, in: folder, isGroup: isGroup)
    }

    /// The file `name` in the open folder `folder`, read as ``read(_:isGroup:)`` reads it.
    package static func read(_ name: String, in folder: Int32, isGroup: (String) -> Bool) -> [String: String] {
        let fd = openat(folder, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { return [:] }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & mode_t(S_IFMT) == mode_t(S_IFREG), info.st_uid == geteuid(), info.st_mode & 0o022 == 0,
            info.st_size <= 64 * 1024
        else { return [:] }
        var bytes = [UInt8](repeating: 0, count: Int(info.st_size))
        let count = bytes.withUnsafeMutableBytes { systemRead(fd, $0.baseAddress, $0.count) }
        guard count >= 0 else { return [:] }
        var lines: [String: String] = [:]
        for line in String(decoding: bytes[..<count], as: UTF8.self).split(separator: "\n") {
            guard let space = line.firstIndex(of: " "), isGroup(String(line[..<space])) else { continue }
            lines[String(line[..<space])] = String(line[line.index(after: space)...])
        }
        return lines
    }

    /// The folder, trusted by what the kernel says of the open descriptor: the user's own,
    /// writable by nobody else.
    package static func openTrustedDirectory(_ directory: String) -> Int32? {
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_uid == geteuid(), info.st_mode & 0o022 == 0 else {
            close(fd)
            return nil
        }
        return fd
    }

    /// `path`'s folder and file name.
    package static func split(_ path: String) -> (directory: String, name: String) {
        guard let slash = path.lastIndex(of: "/") else { return (".", path) }
        return (String(path[..<slash]), String(path[path.index(after: slash)...]))
    }
}

/// read(2), whose name the enum's own `read` hides.
private func systemRead(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
    read(fd, buffer, count)
}
