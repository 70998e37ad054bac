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
/// `~/.local/state/authkit/storage`), mode 0600. It holds no secret; it is trusted only when
/// the open file is the user's own regular file that nobody else may write. A flag,
/// `AUTHKIT_STORAGE` or a `storage` key in the configuration always wins over it. Signing out
/// the last account of the group removes its line.
enum StorageRecord {
    /// The recorded store of `group`, or nil (none recorded, or the file cannot be trusted).
    static func choice(for group: String, environment: [String: String]) -> StorageChoice? {
        entries(path(environment: environment))[group]
    }

    /// Records `choice` for `group` (the Secret Service, the default, removes the line).
    /// Failing to record is not failing the sign-in: the caller logs it.
    static func record(_ choice: StorageChoice, for group: String, environment: [String: String]) throws(AtomicFile.Failure) {
        try update(group, to: choice == .secretService ? nil : choice, environment: environment)
    }

    /// Removes `group`'s line when it names `choice` (its last sign-in there is gone).
    static func forget(_ group: String, storedIn choice: StorageChoice, environment: [String: String]) throws(AtomicFile.Failure) {
        guard Self.choice(for: group, environment: environment) == choice else { return }
        try update(group, to: nil, environment: environment)
    }

    private static func update(_ group: String, to choice: StorageChoice?, environment: [String: String]) throws(AtomicFile.Failure) {
        let path = path(environment: environment)
        var entries = entries(path)
        guard entries[group] != choice else { return }
        entries[group] = choice
        let directory = String(path[..<(path.lastIndex(of: "/") ?? path.endIndex)])
        makeDirectories(directory)
        let text = entries.keys.sorted().map { "\($0) \(entries[$0]?.rawValue ?? "")\n" }.joined()
        try AtomicFile.write(Array(text.utf8), to: path, mode: 0o600)
    }

    static func path(environment: [String: String]) -> String {
        if let state = environment["XDG_STATE_HOME"], state.hasPrefix("/") { return state + "/authkit/storage" }
        var home = environment["HOME"] ?? ""
        if home.isEmpty, let entry = getpwuid(geteuid()), let directory = entry.pointee.pw_dir { home = String(cString: directory) }
        return home + "/.local/state/authkit/storage"
    }

    /// The file's lines; nothing when it is missing, not the user's own regular file, writable
    /// by others, over 64 KiB, or not text. Lines that are not `<group> <store>` are skipped.
    static func entries(_ path: String) -> [String: StorageChoice] {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { return [:] }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_uid == geteuid(), info.st_mode & 0o022 == 0,
            info.st_size <= 64 * 1024
        else { return [:] }
        var bytes = [UInt8](repeating: 0, count: Int(info.st_size))
        let count = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard count >= 0 else { return [:] }
        var entries: [String: StorageChoice] = [:]
        for line in String(decoding: bytes[..<count], as: UTF8.self).split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count == 2, (try? SecretGroup(String(fields[0]))) != nil, let choice = StorageChoice(rawValue: String(fields[1]))
            else { continue }
            entries[String(fields[0])] = choice
        }
        return entries
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
