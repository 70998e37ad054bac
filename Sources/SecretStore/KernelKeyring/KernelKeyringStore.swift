import CKernelKeyring

#if canImport(Glibc)
import Glibc
#endif

/// The Linux kernel's per-user **persistent keyring** (`keyrings(7)`, `persistent-keyring(7)`):
/// for servers reached by SSH, CI runners, WSL and containers, where no Secret Service runs.
///
/// * Kernel memory only: never written to disk, gone at reboot, and after the persistent
///   keyring has been idle for `/proc/sys/kernel/keys/persistent_keyring_expiry` seconds
///   (3 days by default) — or on `keyctl clear`.
/// * Shared by every process of the user — a new SSH session, a cron job, a systemd user
///   service — because each process asks the kernel for the persistent keyring of its uid
///   anew (`KEYCTL_GET_PERSISTENT`), as MIT Kerberos does for `KEYRING:persistent:%{uid}`.
/// * One keyring per group inside it (`authkit:<group>`), one `user` key per item, its
///   description the item's key fields. `user` keys live in unswappable kernel memory (a
///   `big_key` would go to swappable, encrypted shared memory; records are small enough not
///   to need one). Permissions: the **possessor** only (the user may see that a key exists,
///   nothing more): a process possesses the keys by asking the kernel for the persistent
///   keyring, not by guessing a key's serial number from a session keyring of its own (a
///   sandbox's), which the kernel checks against the user bits alone.
/// * A save updates the key's payload in one `add_key(2)` call: readers see the old record or
///   the new one, never half of either, and a refused update (over quota) leaves the old one.
/// * Root can read every user's keys, and so can any process running as the user — the same
///   trust boundary as the Secret Service (SECURITY.md).
public final class KernelKeyringStore: SecretStore {
    /// `KEY_SPEC_PROCESS_KEYRING`: where the persistent keyring is linked for this process.
    private static let processKeyring: Int32 = -2
    /// Possessor: all; user: view only. Nothing for group/other.
    static let permissions: UInt32 = 0x3f01_0000

    /// The store in the calling user's persistent keyring.
    public init() {}

    /// The persistent keyring's id, and the expiry setting, for `status`.
    public struct Info: Sendable, Equatable {
        /// The serial number of the user's persistent keyring.
        public var persistentKeyring: Int32
        /// Seconds of idleness after which the kernel drops the persistent keyring.
        public var expirySeconds: Int?
    }

    /// The user's persistent keyring (created by the kernel on first use).
    public static func info() throws(SecretStoreError) -> Info {
        Info(persistentKeyring: try persistentKeyring(), expirySeconds: readNumber("/proc/sys/kernel/keys/persistent_keyring_expiry"))
    }

    static func persistentKeyring() throws(SecretStoreError) -> Int32 {
        let id = ak_keyctl_get_persistent(UInt32(bitPattern: -1), processKeyring)
        guard id >= 0 else { throw unavailable(operation: "KEYCTL_GET_PERSISTENT", errno: errno) }
        return Int32(truncatingIfNeeded: id)
    }

    /// The group's keyring, or nil when it does not exist (and `create` is false).
    func groupKeyring(_ group: SecretGroup, create: Bool) throws(SecretStoreError) -> Int32? {
        let persistent = try Self.persistentKeyring()
        let description = "authkit:" + group.name
        let found = ak_keyctl_search(persistent, "keyring", description)
        if found >= 0 {
            let id = Int32(truncatingIfNeeded: found)
            try Self.makePrivate(id, what: "the group's keyring")
            return id
        }
        guard errno == ENOKEY || errno == EKEYEXPIRED || errno == EKEYREVOKED else {
            throw Self.failure(operation: "search for the group's keyring", errno: errno)
        }
        guard create else { return nil }
        let made = ak_add_key("keyring", description, nil, 0, persistent)
        guard made >= 0 else { throw Self.failure(operation: "create the group's keyring", errno: errno) }
        let id = Int32(truncatingIfNeeded: made)
        _ = ak_keyctl_setperm(id, Self.permissions)
        try Self.makePrivate(id, what: "the group's keyring")
        return id
    }

    public nonisolated(nonsending) func groups(holding kind: String) async throws(SecretStoreError) -> [SecretGroup] {
        var groups: [SecretGroup] = []
        for id in try Self.members(of: try Self.persistentKeyring()) {
            guard let (type, _, _, description) = Self.describe(id), type == "keyring", description.hasPrefix("authkit:"),
                let group = try? SecretGroup(String(description.dropFirst("authkit:".count)))
            else { continue }
            if try await items(matching: ItemQuery(group: group, kind: kind), loadSecrets: false).contains(where: { $0.problem == nil }) {
                groups.append(group)
            }
        }
        return groups.sorted { $0.name < $1.name }
    }

    public nonisolated(nonsending) func items(matching query: ItemQuery, loadSecrets: Bool) async throws(SecretStoreError) -> [StoredItem] {
        guard let keyring = try groupKeyring(query.group, create: false) else { return [] }
        let location = try location(keyring)
        var items: [StoredItem] = []
        for id in try Self.members(of: keyring) {
            guard let (type, _, _, description) = Self.describe(id), type == "user" else { continue }
            let (key, problem) = KeyDescription.key(from: description, group: query.group)
            guard problem != nil || query.matches(key) else { continue }
            var secret: [UInt8]?
            var itemProblem = problem
            // A key whose permissions another process of the user widened is narrowed again;
            // one that cannot be is reported, and its record is not read.
            if itemProblem == nil, (try? Self.makePrivate(id, what: "the item")) == nil {
                itemProblem = .exposed(
                    Self.attributes(id).map { "owner uid \($0.uid), permissions \(Self.hex($0.permissions))" } ?? "unknown")
            }
            if loadSecrets, itemProblem == nil {
                secret = try Self.read(id)
                if let bytes = secret, !ItemSchema.isUTF8(bytes) { itemProblem = .secretNotText }
            }
            items.append(StoredItem(key: key, label: key.defaultLabel, secret: secret, location: location, problem: itemProblem))
        }
        return items
    }

    @discardableResult
    public nonisolated(nonsending) func save(_ secret: [UInt8], for key: ItemKey, label: String) async throws(SecretStoreError)
        -> StorageLocation
    {
        try ItemSchema.checkSave(secret, for: key)
        guard let keyring = try groupKeyring(key.group, create: true) else {
            throw .providerFailure(operation: "save", message: "no keyring")
        }
        let description = KeyDescription.description(for: key)
        guard description.utf8.count < 4096 else {
            throw .invalidKey(field: "account", reason: "the key's fields are longer than the kernel allows (4 KiB)")
        }
        // An existing key that others may read is not updated in place: it goes (its record
        // is exposed, and never read), and the record goes into a new key of ours.
        var removedExposed = false
        for existing in try Self.members(of: keyring)
        where Self.describe(existing).map({ $0.type == "user" && $0.description == description }) == true && !Self.isPrivate(existing) {
            _ = ak_keyctl_invalidate(existing)
            _ = ak_keyctl_unlink(existing, keyring)
            removedExposed = true
        }
        // One add_key: a new key, or an atomic update of the existing one's payload.
        let added = secret.withUnsafeBytes { ak_add_key("user", description, $0.baseAddress, $0.count, keyring) }
        guard added >= 0 else {
            if errno == EDQUOT { throw Self.quotaExceeded(bytes: secret.count, previousKept: !removedExposed) }
            throw Self.failure(operation: "store the item", errno: errno)
        }
        let id = Int32(truncatingIfNeeded: added)
        _ = ak_keyctl_setperm(id, Self.permissions)
        // Read back: a key that is not ours alone holds no record.
        do {
            try Self.makePrivate(id, what: "the stored item")
        } catch {
            _ = ak_keyctl_invalidate(id)
            _ = ak_keyctl_unlink(id, keyring)
            throw error
        }
        return try location(keyring)
    }

    @discardableResult
    public nonisolated(nonsending) func delete(_ key: ItemKey) async throws(SecretStoreError) -> Bool {
        guard let keyring = try groupKeyring(key.group, create: false) else { return false }
        let wanted = KeyDescription.description(for: key)
        var deleted = false
        for id in try Self.members(of: keyring) where Self.describe(id).map({ $0.type == "user" && $0.description == wanted }) == true {
            _ = ak_keyctl_invalidate(id)
            _ = ak_keyctl_unlink(id, keyring)
            deleted = true
        }
        return deleted
    }

    @discardableResult
    public nonisolated(nonsending) func deleteAll(in group: SecretGroup) async throws(SecretStoreError) -> Int {
        guard let keyring = try groupKeyring(group, create: false) else { return 0 }
        var count = 0
        for id in try Self.members(of: keyring) {
            // Only authkit's own keys are destroyed; anything else linked here (another
            // program's key, a keyring) is only unlinked from the group, and lives on.
            if Self.isOurs(id) {
                _ = ak_keyctl_invalidate(id)
                count += 1
            }
            _ = ak_keyctl_unlink(id, keyring)
        }
        return count
    }

    public nonisolated(nonsending) func storageStatus(for group: SecretGroup) async throws(SecretStoreError) -> StorageStatus {
        let keyring = try groupKeyring(group, create: false)
        var count = 0
        if let keyring { count = try Self.members(of: keyring).filter(Self.isOurs).count }
        let persistent = try Self.persistentKeyring()
        return StorageStatus(
            location: .kernelKeyring(
                keyring: keyring ?? persistent, expirySeconds: Self.readNumber("/proc/sys/kernel/keys/persistent_keyring_expiry")),
            groupCollectionExists: keyring != nil, provider: "Linux kernel keyring", itemCount: count)
    }

    // MARK: System calls

    private func location(_ keyring: Int32) throws(SecretStoreError) -> StorageLocation {
        .kernelKeyring(keyring: keyring, expirySeconds: Self.readNumber("/proc/sys/kernel/keys/persistent_keyring_expiry"))
    }

    /// The key ids linked into `keyring`.
    static func members(of keyring: Int32) throws(SecretStoreError) -> [Int32] {
        var buffer = [Int32](repeating: 0, count: 256)
        while true {
            let size = buffer.withUnsafeMutableBytes { ak_keyctl_read(keyring, $0.baseAddress, $0.count) }
            guard size >= 0 else { throw failure(operation: "list the group's keyring", errno: errno) }
            let count = Int(size) / MemoryLayout<Int32>.size
            if count <= buffer.count { return Array(buffer.prefix(count)) }
            buffer = [Int32](repeating: 0, count: count)
        }
    }

    /// A `user` key's payload.
    static func read(_ key: Int32) throws(SecretStoreError) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let size = buffer.withUnsafeMutableBytes { ak_keyctl_read(key, $0.baseAddress, $0.count) }
            guard size >= 0 else { throw failure(operation: "read an item", errno: errno) }
            if Int(size) <= buffer.count { return Array(buffer.prefix(Int(size))) }
            buffer = [UInt8](repeating: 0, count: Int(size))
        }
    }

    /// A `user` key whose description is authkit's (`authkit1 …`).
    static func isOurs(_ key: Int32) -> Bool {
        describe(key).map { $0.type == "user" && $0.description.hasPrefix(KeyDescription.prefix + " ") } == true
    }

    /// Owner and permission mask of a key, as the kernel reports them now.
    static func attributes(_ key: Int32) -> (uid: UInt32, permissions: UInt32)? {
        describe(key).flatMap { key in key.uid.map { ($0, key.permissions) } }
    }

    /// Ours and open to its possessor alone: no user bit but view, no group or other bit
    /// (possessor bits may be fewer than authkit sets; that locks nobody else in).
    static func isPrivate(_ key: Int32) -> Bool {
        attributes(key).map { $0.uid == getuid() && $0.permissions & 0x00fe_ffff == 0 } == true
    }

    static func hex(_ value: UInt32) -> String { "0x" + String(value, radix: 16) }

    /// Narrows `key` to its possessor again when it is not (another process of the user may
    /// widen it, an earlier authkit let the user read it); throws when the kernel will not, or
    /// the key is not the user's.
    static func makePrivate(_ key: Int32, what: String) throws(SecretStoreError) {
        guard !isPrivate(key) else { return }
        _ = ak_keyctl_setperm(key, permissions)
        guard isPrivate(key) else {
            let now = attributes(key).map { "owner uid \($0.uid), permissions \(hex($0.permissions))" } ?? "not readable"
            throw .kernelKeyringFailure(
                operation: "keep \(what) to you alone",
                message:
                    "its permissions cannot be narrowed to \(hex(permissions)) (\(now)); remove it with `authkit logout` or `keyctl unlink`"
            )
        }
    }

    /// A key's type, owner, permission mask and description as the kernel reports them now,
    /// or nil when it cannot be described (gone meanwhile). The uid is nil when unreadable.
    static func describe(_ key: Int32) -> (type: String, uid: UInt32?, permissions: UInt32, description: String)? {
        var buffer = [CChar](repeating: 0, count: 4096 + 256)
        let size = ak_keyctl_describe(key, &buffer, buffer.count)
        guard size > 0, Int(size) <= buffer.count else { return nil }
        let text = String(decoding: buffer.prefix(Int(size) - 1).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        // "type;uid;gid;perm;description" — the description may itself contain ';'.
        let parts = text.split(separator: ";", maxSplits: 4, omittingEmptySubsequences: false)
        guard parts.count == 5, let permissions = UInt32(parts[3], radix: 16) else { return nil }
        return (String(parts[0]), UInt32(parts[1]), permissions, String(parts[4]))
    }

    static func readNumber(_ path: String) -> Int? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
        guard count > 0 else { return nil }
        return Int(String(decoding: buffer.prefix(count), as: UTF8.self).filter(\.isNumber))
    }

    // MARK: Errors

    /// keyctl itself refused (a container's seccomp profile, a kernel without keys).
    static func unavailable(operation: String, errno code: Int32) -> SecretStoreError {
        switch code {
        case EPERM, ENOSYS, EACCES:
            return .kernelKeyringUnavailable(
                detail: "the kernel refused \(operation) (\(code == ENOSYS ? "ENOSYS" : code == EPERM ? "EPERM" : "EACCES"); "
                    + "a container's seccomp profile blocks keyctl by default)")
        default:
            return failure(operation: operation, errno: code)
        }
    }

    static func failure(operation: String, errno code: Int32) -> SecretStoreError {
        if code == EPERM || code == ENOSYS { return unavailable(operation: operation, errno: code) }
        if code == EDQUOT { return quotaExceeded(bytes: nil, previousKept: false) }
        return .kernelKeyringFailure(operation: operation, message: String(cString: strerror(code)))
    }

    /// EDQUOT: the user's key quota, with the numbers the kernel reports in /proc/key-users.
    static func quotaExceeded(bytes: Int?, previousKept: Bool = true) -> SecretStoreError {
        var usage = ""
        if let text = readText("/proc/key-users") {
            let uid = String(getuid())
            for line in text.split(separator: "\n") where line.trimmingPrefix(while: { $0 == " " }).hasPrefix(uid + ":") {
                // "uid: usage nkeys/nikeys qnkeys/maxkeys qnbytes/maxbytes"
                let fields = line.split(separator: " ").filter { !$0.isEmpty }
                if fields.count >= 5 { usage = "; in use: \(fields[3]) keys, \(fields[4]) bytes" }
            }
        }
        let maxBytes = readNumber(getuid() == 0 ? "/proc/sys/kernel/keys/root_maxbytes" : "/proc/sys/kernel/keys/maxbytes")
        let maxKeys = readNumber(getuid() == 0 ? "/proc/sys/kernel/keys/root_maxkeys" : "/proc/sys/kernel/keys/maxkeys")
        return .kernelKeyringQuota(
            detail: (bytes.map { "a record of \($0) bytes does not fit" } ?? "nothing more fits") + " the user's kernel key quota "
                + "(kernel.keys.maxbytes = \(maxBytes.map(String.init) ?? "?"), kernel.keys.maxkeys = \(maxKeys.map(String.init) ?? "?")\(usage))"
                + (bytes == nil
                    ? "" : previousKept ? "; the previous record was kept" : "; the previous record, which others could read, was removed"))
    }

    static func readText(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while bytes.count < 1 << 20 {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count <= 0 { break }
            bytes += chunk.prefix(count)
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
