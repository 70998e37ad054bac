#if canImport(Glibc)
import Glibc
#endif

/// Small POSIX file reads for configuration (no Foundation on the start-up path).
enum FileAccess {
    enum Failure: Error, Equatable, CustomStringConvertible {
        case notFound
        case unreadable(String)
        case tooLarge

        var description: String {
            switch self {
            case .notFound: return "the file does not exist"
            case .unreadable(let reason): return "cannot read the file: \(reason)"
            case .tooLarge: return "the file is larger than 1 MiB"
            }
        }
    }

    static func read(_ path: String, limit: Int = 1 << 20) throws(Failure) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            if errno == ENOENT || errno == ENOTDIR { throw .notFound }
            throw .unreadable(String(cString: strerror(errno)))
        }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw .unreadable(String(cString: strerror(errno)))
            }
            if count == 0 { break }
            bytes.append(contentsOf: chunk[0..<count])
            if bytes.count > limit { throw .tooLarge }
        }
        return bytes
    }

    /// True when group or others may read the file.
    static func isReadableByOthers(_ path: String) -> Bool {
        var info = stat()
        guard stat(path, &info) == 0 else { return false }
        return info.st_mode & (S_IRGRP | S_IROTH) != 0
    }
}
