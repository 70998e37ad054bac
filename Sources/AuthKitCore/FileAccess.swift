#if hasFeature(Embedded)
import CLibc
#elseif canImport(Glibc)
import Glibc
#endif

/// Small POSIX file reads for the files a person names — the config file, `jwt verify
/// --jwks` — with no Foundation on the start-up path. Regular files only: a FIFO, a device
/// or a directory given by mistake (or on purpose) is refused at once instead of blocking the
/// open or reading forever; and never more than `limit` bytes.
package enum FileAccess {
    package enum Failure: Error, Equatable, CustomStringConvertible {
        case notFound
        case unreadable(String)
        case notRegular
        case tooLarge(limit: Int)
        /// The caller's check of the open file refused it (the phrase says why).
        case refused(String)

        package var description: String {
            switch self {
            case .notFound: return "the file does not exist"
            case .unreadable(let reason): return "cannot read the file: \(reason)"
            case .notRegular: return "it is not a regular file (a FIFO, device or directory)"
            case .tooLarge(let limit): return "the file is larger than \(limit >= 1 << 20 ? "\(limit >> 20) MiB" : "\(limit >> 10) KiB")"
            case .refused(let problem): return problem
            }
        }
    }

    package static func read(_ path: String, limit: Int = 1 << 20) throws(Failure) -> [UInt8] {
        try read(path, limit: limit) { _ in nil }.bytes
    }

    /// Reads the file after `vet` accepted the open descriptor (nil: no problem), and returns
    /// its bytes with the descriptor's mode: what is checked is what is read.
    package static func read(
        _ path: String, limit: Int = 1 << 20, vet: (_ descriptor: Int32) -> String?
    ) throws(Failure) -> (bytes: [UInt8], mode: mode_t) {
        // O_NONBLOCK: opening a FIFO must not wait for a writer; the type is checked next.
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
        guard fd >= 0 else {
            if errno == ENOENT || errno == ENOTDIR { throw .notFound }
            throw .unreadable(String(cString: strerror(errno)))
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw .unreadable(String(cString: strerror(errno))) }
        guard info.st_mode & S_IFMT == S_IFREG else { throw .notRegular }
        if info.st_size > limit { throw .tooLarge(limit: limit) }
        if let problem = vet(fd) { throw .refused(problem) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { systemRead(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw .unreadable(String(cString: strerror(errno)))
            }
            if count == 0 { break }
            bytes.append(contentsOf: chunk[0..<count])
            if bytes.count > limit { throw .tooLarge(limit: limit) }
        }
        return (bytes, info.st_mode)
    }
}

extension FileAccess {
    /// Everything `descriptor` gives until its end, at most `limit` + 1 bytes (more is too much
    /// for any reader of it), and the error (errno) that ended the reading early, if one did,
    /// with what was read before it.
    package static func readAll(descriptor: Int32, limit: Int) -> (bytes: [UInt8], error: Int32?) {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while bytes.count <= limit {
            let count = chunk.withUnsafeMutableBytes { systemRead(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                let code = errno
                if code == EINTR { continue }
                return (bytes, code)
            }
            if count == 0 { break }
            bytes.append(contentsOf: chunk[0..<count])
        }
        return (bytes, nil)
    }
}

/// read(2), which `FileAccess.read` shadows inside the type.
private func systemRead(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int { read(fd, buffer, count) }
