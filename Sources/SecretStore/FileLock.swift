#if canImport(Glibc)
import Glibc
#endif

/// An exclusive `flock` on `path`, held across one read-modify-write of a file store (the
/// plain file, the encrypted files): the one lock both take.
struct FileLock {
    let fd: Int32

    init(path: String) throws(SecretStoreError) {
        fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw .plainFileIO(path: path, operation: "open the lock file", errno: errno) }
        while flock(fd, LOCK_EX) != 0 {
            guard errno == EINTR else {
                let code = errno
                close(fd)
                throw .plainFileIO(path: path, operation: "lock", errno: code)
            }
        }
    }

    func release() { close(fd) }
}
