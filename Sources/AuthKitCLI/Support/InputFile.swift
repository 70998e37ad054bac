import AuthKit
import AuthKitCore

#if canImport(Glibc)
import Glibc
#endif

/// Reading a whole (small) file or descriptor with plain POSIX calls.
enum InputFile {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// A regular file's bytes, at most `limit` (AuthKit's FileAccess: no FIFO, no device).
    static func read(path: String, limit: Int) throws(Failure) -> [UInt8] {
        do {
            return try FileAccess.read(path, limit: limit)
        } catch {
            throw Failure(description: error == .notFound ? "No such file or directory" : error.description)
        }
    }

    static func read(descriptor: Int32, limit: Int) throws(Failure) -> [UInt8] {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while bytes.count <= limit {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw Failure(description: String(cString: strerror(errno)))
            }
            if count == 0 { break }
            bytes.append(contentsOf: chunk[0..<count])
        }
        return bytes
    }
}
