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
        let (bytes, error) = FileAccess.readAll(descriptor: descriptor, limit: limit)
        if let error { throw Failure(description: String(cString: strerror(error))) }
        return bytes
    }
}
