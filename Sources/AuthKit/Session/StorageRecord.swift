import SecretStore

#if canImport(Glibc)
import Glibc
#endif

/// Which store holds a group's sign-in when it is not the Secret Service: written when a
/// sign-in is saved elsewhere (`authkit login --storage kernel-keyring`), read by every later
/// command and by ``SharedSession/init(group:store:transport:environment:lockTimeout:logger:clock:)``
/// when nothing names a store, so the sign-in is found where it was stored without the flag.
///
/// One line per group, `<group> <store>`, in `$XDG_STATE_HOME/authkit/storage` (else
/// `~/.local/state/authkit/storage`), mode 0600, changed under a lock beside it
/// (`storage.lock`). It holds no secret; it is trusted only when the open folder and the open
/// file are the user's own and nobody else may write them. A flag,
/// `AUTHKIT_STORAGE` or a `storage` key in the configuration always wins over it. Signing out
/// the last account of the group removes its line.
enum StorageRecord {
    /// The recorded store of `group`, or nil (none recorded, or the file cannot be trusted).
    static func choice(for group: String, environment: [String: String]) -> StorageChoice? {
        entries(path(environment: environment))[group]
    }

    /// Why the record could not be written (logged by the caller; never fatal).
    struct Failure: Error {
        var path: String
        var reason: String
    }

    /// Records `choice` for `group` (the Secret Service, the default, removes the line).
    /// Failing to record is not failing the sign-in: the caller logs it.
    static func record(_ choice: StorageChoice, for group: String, environment: [String: String]) throws(Failure) {
        try update(group, environment: environment) { _ in choice == .secretService ? nil : choice }
    }

    /// Removes `group`'s line when it names `choice` (its last sign-in there is gone).
    static func forget(_ group: String, storedIn choice: StorageChoice, environment: [String: String]) throws(Failure) {
        try update(group, environment: environment) { current in current == choice ? nil : current }
    }

    /// Reads, changes and writes the file under an exclusive lock beside it, so that two
    /// processes recording two groups at once lose neither line.
    private static func update(
        _ group: String, environment: [String: String], _ change: (StorageChoice?) -> StorageChoice?
    ) throws(Failure) {
        let path = path(environment: environment)
        let (directory, name) = split(path)
        makeDirectories(directory)
        guard let folder = openTrustedDirectory(directory) else {
            throw Failure(path: directory, reason: "not a folder of this user's that only this user can write")
        }
        defer { close(folder) }
        let lock = openat(folder, name + ".lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard lock >= 0 else { throw Failure(path: path + ".lock", reason: String(cString: strerror(errno))) }
        defer { close(lock) }
        guard flock(lock, LOCK_EX) == 0 else { throw Failure(path: path + ".lock", reason: String(cString: strerror(errno))) }
        var entries = read(name, in: folder)
        let wanted = change(entries[group])
        guard entries[group] != wanted else { return }
        entries[group] = wanted
        let text = entries.keys.sorted().map { "\($0) \(entries[$0]?.rawValue ?? "")\n" }.joined()
        do { try AtomicFile.write(Array(text.utf8), to: path, mode: 0o600) } catch {
            throw Failure(path: error.path, reason: error.reason)
        }
    }

    static func path(environment: [String: String]) -> String {
        if let state = environment["XDG_STATE_HOME"], state.hasPrefix("/") { return state + "/authkit/storage" }
        var home = environment["HOME"] ?? ""
        if home.isEmpty, let entry = getpwuid(geteuid()), let directory = entry.pointee.pw_dir { home = String(cString: directory) }
        return home + "/.local/state/authkit/storage"
    }

    /// The file's lines; nothing when its folder or the file itself is not the user's own and
    /// writable by the user alone, when it is over 64 KiB, or missing. Lines that are not
    /// `<group> <store>` are skipped.
    static func entries(_ path: String) -> [String: StorageChoice] {
        let (directory, name) = split(path)
        guard let folder = openTrustedDirectory(directory) else { return [:] }
        defer { close(folder) }
        return read(name, in: folder)
    }

    private static func read(_ name: String, in folder: Int32) -> [String: StorageChoice] {
        let fd = openat(folder, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { return [:] }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_uid == geteuid(), info.st_mode & 0o022 == 0,
            info.st_size <= 64 * 1024
        else { return [:] }
        var bytes = [UInt8](repeating: 0, count: Int(info.st_size))
        let count = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
        guard count >= 0 else { return [:] }
        var entries: [String: StorageChoice] = [:]
        for line in String(decoding: bytes[..<count], as: UTF8.self).split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: false)
            guard fields.count == 2, (try? SecretGroup(String(fields[0]))) != nil, let choice = StorageChoice(rawValue: String(fields[1]))
            else { continue }
            entries[String(fields[0])] = choice
        }
        return entries
    }

    /// The folder, trusted by what the kernel says of the open descriptor: the user's own,
    /// writable by nobody else.
    private static func openTrustedDirectory(_ directory: String) -> Int32? {
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_uid == geteuid(), info.st_mode & 0o022 == 0 else {
            close(fd)
            return nil
        }
        return fd
    }

    private static func split(_ path: String) -> (directory: String, name: String) {
        guard let slash = path.lastIndex(of: "/") else { return (".", path) }
        return (String(path[..<slash]), String(path[path.index(after: slash)...]))
    }

    private static func makeDirectories(_ directory: String) {
        var path = ""
        for part in directory.split(separator: "/") {
            path += "/" + part
            mkdir(path, 0o700)
        }
    }
}

extension StorageChoice {
    /// The choice that names `store`, or nil for a store of a tool's own.
    init?(store: any SecretStore) {
        switch store {
        case is SecretServiceStore: self = .secretService
        case is KernelKeyringStore: self = .kernelKeyring
        case is PlainFileStore: self = .plainFile
        default: return nil
        }
    }
}
