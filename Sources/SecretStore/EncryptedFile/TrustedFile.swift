import Age
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Files and folders of the encrypted-file store, trusted by what the kernel says of the open
/// descriptor: opened without following a link, then ours, of the right type, and open to
/// nobody else (no group or other bits) — checked with fstat on that descriptor, so nothing
/// can be swapped in between the check and the read.
enum TrustedFile {
    /// Why a file or folder is not trusted, or could not be read.
    enum Refusal: Error, Equatable {
        case missing
        case failed(SecretStoreError)
    }

    /// The largest file read: an item's record is a few KiB, an identity file less.
    static let maximumBytes = 1 << 20

    /// Opens the folder `path` (ours, a real folder, mode 0700 or narrower); nil when it does
    /// not exist. The caller closes the descriptor.
    static func openFolder(_ path: String) throws(SecretStoreError) -> Int32? {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else {
            let code = errno
            if code == ENOENT { return nil }
            if code == ELOOP || code == ENOTDIR {
                throw .plainFileIO(path: path, operation: "use (it is a symbolic link or not a folder)", errno: code)
            }
            throw .plainFileIO(path: path, operation: "open", errno: code)
        }
        do {
            try check(fd, path: path, type: S_IFDIR, expected: 0o700)
        } catch {
            close(fd)
            throw error
        }
        return fd
    }

    /// Opens the folder `path` inside the store folder `base`: `base` as ``openFolder(_:)``
    /// does, then each folder below it through the one above (`openat`, never following a link),
    /// every one checked the same way — a `tokens` folder others may write to, or a link in its
    /// place, is refused, not trusted because the last folder is ours. Nil when one is missing.
    static func openFolder(_ path: String, under base: String) throws(SecretStoreError) -> Int32? {
        guard var fd = try openFolder(base) else { return nil }
        guard path.count > base.count, path.hasPrefix(base + "/") else { return fd }
        var opened = base
        for component in path.dropFirst(base.count + 1).split(separator: "/") {
            opened += "/" + component
            let next = openat(fd, String(component), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            let code = errno
            close(fd)
            guard next >= 0 else {
                if code == ENOENT { return nil }
                if code == ELOOP || code == ENOTDIR {
                    throw .plainFileIO(path: opened, operation: "use (it is a symbolic link or not a folder)", errno: code)
                }
                throw .plainFileIO(path: opened, operation: "open", errno: code)
            }
            do {
                try check(next, path: opened, type: S_IFDIR, expected: 0o700)
            } catch {
                close(next)
                throw error
            }
            fd = next
        }
        return fd
    }

    /// The bytes of the file `name` in the store folder `base` (checked as ``openFolder(_:)``
    /// does), or nil when either is missing.
    static func read(_ name: String, under base: String) throws(SecretStoreError) -> [UInt8]? {
        guard let fd = try openFolder(base) else { return nil }
        defer { close(fd) }
        do {
            return try read(name, in: fd, path: base + "/" + name).bytes
        } catch {
            switch error {
            case .missing: return nil
            case .failed(let error): throw error
            }
        }
    }

    /// Makes the folder `path` and its missing parents, the last one mode 0700, then opens it
    /// as ``openFolder(_:)`` does.
    static func makeFolder(_ path: String) throws(SecretStoreError) -> Int32 {
        if let fd = try openFolder(path) { return fd }
        var prefix = ""
        for component in path.split(separator: "/", omittingEmptySubsequences: true) {
            prefix += "/" + component
            if mkdir(prefix, 0o700) != 0 && errno != EEXIST {
                throw .plainFileIO(path: prefix, operation: "create", errno: errno)
            }
        }
        // mkdir honours the umask; the folder is made exactly 0700 through its descriptor.
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { throw .plainFileIO(path: path, operation: "open", errno: errno) }
        var info = stat()
        if fstat(fd, &info) == 0, info.st_uid == geteuid() { _ = fchmod(fd, 0o700) }
        close(fd)
        guard let opened = try openFolder(path) else { throw .plainFileIO(path: path, operation: "open", errno: ENOENT) }
        return opened
    }

    /// What a file holds.
    struct Contents {
        var bytes: [UInt8]
    }

    /// The bytes of the regular file `name` in the open folder `folder` (`path` names it in
    /// errors), read only when it is ours and mode 0600 or narrower.
    static func read(_ name: String, in folder: Int32, path: String) throws(Refusal) -> Contents {
        let fd = openat(folder, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else {
            let code = errno
            if code == ENOENT { throw .missing }
            if code == ELOOP { throw .failed(.plainFileIO(path: path, operation: "open (it is a symbolic link)", errno: code)) }
            throw .failed(.plainFileIO(path: path, operation: "open", errno: code))
        }
        defer { close(fd) }
        do {
            try check(fd, path: path, type: S_IFREG, expected: 0o600)
        } catch {
            throw .failed(error)
        }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16384)
        defer { SecretBytes.wipe(&buffer) }
        while true {
            let count = Glibc.read(fd, &buffer, buffer.count)
            if count < 0 {
                if errno == EINTR { continue }
                throw .failed(.plainFileIO(path: path, operation: "read", errno: errno))
            }
            if count == 0 { return Contents(bytes: bytes) }
            bytes += buffer[..<count]
            guard bytes.count <= maximumBytes else {
                throw .failed(.plainFileIO(path: path, operation: "read (it is larger than 1 MiB)", errno: EFBIG))
            }
        }
    }

    /// The bytes of the file at `path` (itself checked; its folder, a service's credentials
    /// folder, may belong to the system), or nil when missing.
    static func read(_ path: String) throws(SecretStoreError) -> [UInt8]? {
        let (folder, name) = split(path)
        let fd = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else {
            if errno == ENOENT { return nil }
            throw .plainFileIO(path: folder, operation: "open", errno: errno)
        }
        defer { close(fd) }
        do {
            return try read(name, in: fd, path: path).bytes
        } catch {
            switch error {
            case .missing: return nil
            case .failed(let error): throw error
            }
        }
    }

    /// The names in the open folder `folder`.
    static func names(in folder: Int32) -> [String] {
        let copy = dup(folder)
        guard copy >= 0, let listing = fdopendir(copy) else { return [] }
        defer { closedir(listing) }
        var names: [String] = []
        while let entry = readdir(listing) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted()
    }

    /// Ours, of `type`, and open to nobody else.
    static func check(_ fd: Int32, path: String, type: mode_t, expected: UInt32) throws(SecretStoreError) {
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw .plainFileIO(path: path, operation: "inspect", errno: errno) }
        guard info.st_mode & S_IFMT == type else {
            throw .plainFileIO(
                path: path, operation: type == S_IFDIR ? "use (it is not a folder)" : "read (it is not a regular file)",
                errno: type == S_IFDIR ? ENOTDIR : EISDIR)
        }
        guard info.st_uid == geteuid() else { throw .plainFileOwner(path: path, owner: info.st_uid) }
        let mode = UInt32(info.st_mode) & 0o7777
        guard mode & 0o077 == 0 else { throw .plainFilePermissions(path: path, mode: mode, expected: expected) }
    }

    /// The folder and the last name of `path`.
    static func split(_ path: String) -> (folder: String, name: String) {
        guard let slash = path.lastIndex(of: "/") else { return (".", path) }
        let folder = slash == path.startIndex ? "/" : String(path[..<slash])
        return (folder, String(path[path.index(after: slash)...]))
    }

    /// Writes `bytes` to `path` with the one atomic writer, mode 0600.
    static func write(_ bytes: [UInt8], to path: String) throws(SecretStoreError) {
        do throws(AtomicFile.Failure) {
            try AtomicFile.write(bytes, to: path, mode: 0o600)
        } catch {
            throw .plainFileIO(path: error.path, operation: error.operation, errno: error.errno)
        }
    }
}
