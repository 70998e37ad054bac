#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// An **unencrypted** store in a file, only for users who explicitly choose it (a flag or
/// configuration, like gh's `--insecure-storage`) where no Secret Service can run.
///
/// Each group is one file `<directory>/<group>.json`, mode 0600, in a directory of mode 0700
/// (default `$XDG_STATE_HOME/authkit`, else `~/.local/state/authkit`). Every change writes a
/// new file and renames it over the old one (temp file, fsync, rename, fsync of the
/// directory), under an `flock` on `<group>.lock` so that two processes never lose each
/// other's changes. A directory or file that others could read, or that belongs to another
/// user, is refused rather than repaired. A file that cannot be parsed is reported and left
/// alone: saves refuse to overwrite it. Every ``StorageLocation`` it returns is
/// ``StorageLocation/plainFile(path:)``, so callers can say the tokens are in a plain file.
public final class PlainFileStore: SecretStore {
    /// The directory holding the files.
    public let directory: String

    /// - Parameter directory: the directory to use; nil for the default under
    ///   `$XDG_STATE_HOME` (or `~/.local/state`).
    public init(directory: String? = nil) {
        self.directory = directory ?? Self.defaultDirectory()
    }

    /// `$XDG_STATE_HOME/authkit` when that is an absolute path, else `$HOME/.local/state/authkit`.
    public static func defaultDirectory() -> String {
        if let state = getenv("XDG_STATE_HOME").map({ String(cString: $0) }), state.hasPrefix("/") {
            return state + "/authkit"
        }
        return UserHome.path(home: getenv("HOME").map { String(cString: $0) }) + "/.local/state/authkit"
    }

    /// The file of `group`.
    public func path(for group: SecretGroup) -> String { directory + "/" + group.name + ".json" }

    public nonisolated(nonsending) func items(matching query: ItemQuery, loadSecrets: Bool) async throws(SecretStoreError) -> [StoredItem] {
        try checkDirectory(create: false)
        guard let entries = try read(query.group) else { return [] }
        return entries.map(\.item).filter { $0.problem != nil || query.matches($0.key) }.map { record in
            var item = record
            if !loadSecrets { item.secret = nil }
            return item
        }
    }

    public nonisolated(nonsending) func groups(holding kind: String) async throws(SecretStoreError) -> [SecretGroup] {
        guard let folder = opendir(directory) else { return [] }
        var names: [String] = []
        while let entry = readdir(folder) {
            names.append(withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) })
        }
        closedir(folder)
        var groups: [SecretGroup] = []
        for name in names.sorted() where name.hasSuffix(".json") {
            guard let group = try? SecretGroup(String(name.dropLast(".json".count))) else { continue }
            if (try? await items(matching: ItemQuery(group: group, kind: kind), loadSecrets: false))?.contains(where: { $0.problem == nil })
                == true
            {
                groups.append(group)
            }
        }
        return groups
    }

    @discardableResult
    public nonisolated(nonsending) func save(_ secret: [UInt8], for key: ItemKey, label: String) async throws(SecretStoreError)
        -> StorageLocation
    {
        try ItemSchema.checkSave(secret, for: key)
        try checkDirectory(create: true)
        let lock = try FileLock(path: directory + "/" + key.group.name + ".lock")
        defer { lock.release() }
        var entries = try read(key.group) ?? []
        let now = UInt64(max(0, time(nil)))
        let created = entries.first { $0.item.problem == nil && $0.item.key == key }?.item.created ?? now
        entries.removeAll { $0.item.problem == nil && $0.item.key == key }
        let item = StoredItem(
            key: key, label: label.isEmpty ? key.defaultLabel : label, secret: secret,
            location: .plainFile(path: path(for: key.group)), created: created, modified: now)
        entries.append(PlainFileFormat.Entry(item: item, original: nil))
        try write(entries, group: key.group)
        return .plainFile(path: path(for: key.group))
    }

    @discardableResult
    public nonisolated(nonsending) func delete(_ key: ItemKey) async throws(SecretStoreError) -> Bool {
        try checkDirectory(create: false)
        let lock = try FileLock(path: directory + "/" + key.group.name + ".lock")
        defer { lock.release() }
        guard var entries = try read(key.group) else { return false }
        let before = entries.count
        entries.removeAll { $0.item.key == key }
        guard entries.count != before else { return false }
        try write(entries, group: key.group)
        return true
    }

    @discardableResult
    public nonisolated(nonsending) func deleteAll(in group: SecretGroup) async throws(SecretStoreError) -> Int {
        try checkDirectory(create: false)
        let lock = try FileLock(path: directory + "/" + group.name + ".lock")
        defer { lock.release() }
        let file = path(for: group)
        let count: Int
        do {
            guard let entries = try read(group) else { return 0 }
            count = entries.count
        } catch .plainFileCorrupt {
            // An explicit "delete everything of the group" also removes an unreadable file.
            count = 1
        }
        guard unlink(file) == 0 else { throw .plainFileIO(path: file, operation: "delete", errno: errno) }
        try syncDirectory()
        return count
    }

    public nonisolated(nonsending) func storageStatus(for group: SecretGroup) async throws(SecretStoreError) -> StorageStatus {
        try checkDirectory(create: false)
        let count = try read(group)?.count ?? 0
        return StorageStatus(
            location: .plainFile(path: path(for: group)), groupCollectionExists: true, provider: nil, itemCount: count)
    }

    // MARK: Files

    /// Checks (or with `create`, makes) the directory: ours, a real directory, mode 0700.
    private func checkDirectory(create: Bool) throws(SecretStoreError) {
        var info = stat()
        if lstat(directory, &info) != 0 {
            let code = errno
            guard code == ENOENT, create else {
                if code == ENOENT { return }
                throw .plainFileIO(path: directory, operation: "inspect", errno: code)
            }
            try makeDirectory(directory)
            guard lstat(directory, &info) == 0 else { throw .plainFileIO(path: directory, operation: "inspect", errno: errno) }
        }
        guard info.st_mode & S_IFMT == S_IFDIR else {
            throw .plainFileIO(path: directory, operation: "use (it is not a directory, or is a symbolic link)", errno: ENOTDIR)
        }
        try checkOwnerAndMode(directory, info, expected: 0o700)
    }

    private func makeDirectory(_ path: String) throws(SecretStoreError) {
        // Parents too (e.g. ~/.local/state), private as the XDG spec recommends for state.
        var prefix = ""
        for component in path.split(separator: "/", omittingEmptySubsequences: true) {
            prefix += "/" + component
            if mkdir(prefix, 0o700) != 0 && errno != EEXIST {
                throw .plainFileIO(path: prefix, operation: "create", errno: errno)
            }
        }
        // mkdir honours the umask; make the final directory exactly 0700.
        guard chmod(path, 0o700) == 0 else { throw .plainFileIO(path: path, operation: "set the mode of", errno: errno) }
    }

    private func checkOwnerAndMode(_ path: String, _ info: stat, expected: UInt32) throws(SecretStoreError) {
        guard info.st_uid == geteuid() else { throw .plainFileOwner(path: path, owner: info.st_uid) }
        let mode = UInt32(info.st_mode) & 0o7777
        guard mode & 0o077 == 0 else { throw .plainFilePermissions(path: path, mode: mode, expected: expected) }
    }

    /// The records of `group`, or nil when its file does not exist.
    private func read(_ group: SecretGroup) throws(SecretStoreError) -> [PlainFileFormat.Entry]? {
        let file = path(for: group)
        let fd = open(file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        if fd < 0 {
            let code = errno
            if code == ENOENT { return nil }
            if code == ELOOP { throw .plainFileIO(path: file, operation: "open (it is a symbolic link)", errno: code) }
            throw .plainFileIO(path: file, operation: "open", errno: code)
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw .plainFileIO(path: file, operation: "inspect", errno: errno) }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw .plainFileIO(path: file, operation: "read (it is not a regular file)", errno: EISDIR)
        }
        try checkOwnerAndMode(file, info, expected: 0o600)
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16384)
        while true {
            let count = Glibc.read(fd, &buffer, buffer.count)
            if count < 0 {
                if errno == EINTR { continue }
                throw .plainFileIO(path: file, operation: "read", errno: errno)
            }
            if count == 0 { break }
            bytes += buffer[..<count]
            guard bytes.count <= 16 << 20 else { throw .plainFileCorrupt(path: file, reason: "it is larger than 16 MiB") }
        }
        return try PlainFileFormat.decode(bytes, group: group, path: file)
    }

    private func write(_ entries: [PlainFileFormat.Entry], group: SecretGroup) throws(SecretStoreError) {
        let bytes = Array(PlainFileFormat.encode(entries, group: group).utf8)
        do throws(AtomicFile.Failure) {
            try AtomicFile.write(bytes, to: path(for: group), mode: 0o600)
        } catch {
            throw .plainFileIO(path: error.path, operation: error.operation, errno: error.errno)
        }
    }

    /// Makes an unlink durable.
    private func syncDirectory() throws(SecretStoreError) {
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw .plainFileIO(path: directory, operation: "open", errno: errno) }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw .plainFileIO(path: directory, operation: "flush", errno: errno) }
    }
}
