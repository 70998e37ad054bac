import Age
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Tokens in **age-encrypted files** (the C2SP age v1 format, as `age`, `rage` and `passage`
/// write it): encrypted at rest, surviving reboots, unlocked once per boot — for dev VMs, WSL,
/// build boxes and home servers where the kernel keyring signs users out at every reboot.
///
/// Layout, under `$XDG_DATA_HOME/authkit` (else `~/.local/share/authkit`), every folder 0700
/// and every file 0600:
///
/// * `identity.age` — the store's X25519 identity, sealed with a passphrase (an armored age
///   file with one scrypt stanza, work factor 2^18, as `age-keygen | age -p -a` makes): what
///   a backup must keep, with the passphrase.
/// * `recipient` — the identity's public key (`age1…`). Saving needs only this, so a sign-in
///   and every refresh write while the store is locked.
/// * `tokens/<group>/<name>.age` — **one file per item**, encrypted to the recipient; `<name>`
///   is a hash of the item's key. One file per item rather than per group because an age file
///   cannot be amended without opening it: a save while locked must not need the other
///   items, a delete needs no identity at all, and a write never touches another item's file.
///   The plaintext holds the whole key, the group too, checked on every read: a file moved
///   from another group or over another item is refused (``ItemProblem/refused(_:)``).
///
/// Reading needs the identity, found (in this order) in the file `AUTHKIT_IDENTITY_FILE` names,
/// in `$CREDENTIALS_DIRECTORY/authkit-identity` (systemd's `LoadCredential=`/
/// `LoadCredentialEncrypted=`), or in the kernel user keyring where `authkit unlock` put it
/// (``IdentityKeyring``). Without one the store is locked: reads answer
/// ``SecretStoreError/encryptedStoreLocked(directory:)``, never a prompt.
///
/// Files are trusted by the open descriptor (``TrustedFile``); writes use the one atomic
/// writer under the group folder's `flock`.
public final class EncryptedFileStore: SecretStore {
    /// The folder holding the identity, the recipient and the token files.
    public let directory: String
    let environment: [String: String]?

    /// The name of the identity a service is handed by systemd, in `$CREDENTIALS_DIRECTORY`.
    public static let credentialName = "authkit-identity"
    /// The environment variable naming an unsealed identity file for a service.
    public static let identityFileVariable = "AUTHKIT_IDENTITY_FILE"

    /// - Parameters:
    ///   - directory: the folder to use; nil for `$XDG_DATA_HOME/authkit` (or
    ///     `~/.local/share/authkit`).
    ///   - environment: where to look for `AUTHKIT_IDENTITY_FILE` and `CREDENTIALS_DIRECTORY`;
    ///     nil for the process's environment.
    public init(directory: String? = nil, environment: [String: String]? = nil) {
        self.directory = directory ?? Self.defaultDirectory()
        self.environment = environment
    }

    /// `$XDG_DATA_HOME/authkit` when that is an absolute path, else `$HOME/.local/share/authkit`.
    public static func defaultDirectory() -> String {
        if let data = getenv("XDG_DATA_HOME").map({ String(cString: $0) }), data.hasPrefix("/") {
            return data + "/authkit"
        }
        return UserHome.path(home: getenv("HOME").map { String(cString: $0) }) + "/.local/share/authkit"
    }

    /// The passphrase-sealed identity file.
    public var identityPath: String { directory + "/identity.age" }
    /// The recipient file (the identity's public key).
    public var recipientPath: String { directory + "/recipient" }
    /// The folder of `group`'s item files.
    public func folder(for group: SecretGroup) -> String { directory + "/tokens/" + group.name }

    /// The file name of `key`'s item: SHA-256 of its fields, each prefixed with its length,
    /// hex, shortened to 128 bits — no account name in a file name.
    static func fileName(for key: ItemKey) -> String {
        var input: [UInt8] = Array("authkit-item-v1".utf8)
        for field in [key.issuer, key.clientID, key.account, key.kind] {
            input += Array("\n\(field.utf8.count):".utf8) + Array(field.utf8)
        }
        let digest = (try? AgeCrypto.sha256(input)) ?? []
        let hex = Array("0123456789abcdef".utf8)
        return String(decoding: digest.prefix(16).flatMap { [hex[Int($0 >> 4)], hex[Int($0 & 0xF)]] }, as: UTF8.self) + ".age"
    }

    // MARK: SecretStore

    public nonisolated(nonsending) func items(matching query: ItemQuery, loadSecrets: Bool) async throws(SecretStoreError) -> [StoredItem] {
        guard let (fd, names) = try openGroup(query.group) else { return [] }
        defer { close(fd) }
        guard !names.isEmpty else { return [] }
        guard let identity = try identity()?.identity else { throw .encryptedStoreLocked(directory: directory) }
        // A query for one whole key reads only that key's file, and reports a refused file as
        // that key's item.
        let wanted: String? =
            if let issuer = query.issuer, let clientID = query.clientID, let account = query.account, let kind = query.kind {
                Self.fileName(for: ItemKey(group: query.group, issuer: issuer, clientID: clientID, account: account, kind: kind))
            } else { nil }
        var found: [StoredItem] = []
        for name in names where wanted == nil || name == wanted {
            guard var item = try read(name, in: fd, group: query.group, identity: identity) else { continue }
            if item.problem != nil, wanted != nil, let issuer = query.issuer, let clientID = query.clientID,
                let account = query.account, let kind = query.kind
            {
                item.key = ItemKey(group: query.group, issuer: issuer, clientID: clientID, account: account, kind: kind)
            }
            guard item.problem != nil || query.matches(item.key) else { continue }
            if !loadSecrets { item.secret = nil }
            found.append(item)
        }
        return found
    }

    public nonisolated(nonsending) func groups(holding kind: String) async throws(SecretStoreError) -> [SecretGroup] {
        guard let tokens = try TrustedFile.openFolder(directory + "/tokens", under: directory) else { return [] }
        let names = TrustedFile.names(in: tokens)
        close(tokens)
        let unlocked = (try? identity()) != nil
        var groups: [SecretGroup] = []
        for name in names {
            guard let group = try? SecretGroup(name), let (fd, files) = try? openGroup(group) else { continue }
            close(fd)
            guard !files.isEmpty else { continue }
            // Locked, the kinds are unknown (they are inside the files): a group with files counts.
            if unlocked {
                let items = (try? await items(matching: ItemQuery(group: group, kind: kind), loadSecrets: false)) ?? []
                guard items.contains(where: { $0.problem == nil }) else { continue }
            }
            groups.append(group)
        }
        return groups
    }

    @discardableResult
    public nonisolated(nonsending) func save(_ secret: [UInt8], for key: ItemKey, label: String) async throws(SecretStoreError)
        -> StorageLocation
    {
        try ItemSchema.checkSave(secret, for: key)
        guard let recipient = try recipient() else { throw .encryptedStoreNotSetUp(directory: directory) }
        let folderPath = folder(for: key.group)
        close(try TrustedFile.makeFolder(directory + "/tokens"))
        close(try TrustedFile.makeFolder(folderPath))
        // Every folder from the store's down, ours and closed to others, before anything is written.
        guard let fd = try TrustedFile.openFolder(folderPath, under: directory) else {
            throw .plainFileIO(path: folderPath, operation: "open", errno: ENOENT)
        }
        defer { close(fd) }
        let lock = try FileLock(path: folderPath + "/.lock")
        defer { lock.release() }
        let name = Self.fileName(for: key)
        let now = UInt64(max(0, time(nil)))
        // The first save's time is kept when the store is unlocked; locked, it cannot be read.
        var created = now
        if let identity = try? identity()?.identity, let old = try? read(name, in: fd, group: key.group, identity: identity),
            old.problem == nil,
            old.key == key
        {
            created = old.created ?? now
        }
        let location = location(key.group, locked: false)
        let item = StoredItem(
            key: key, label: label.isEmpty ? key.defaultLabel : label, secret: secret, location: location, created: created,
            modified: now)
        var plaintext = EncryptedFileFormat.encode(item)
        defer { SecretBytes.wipe(&plaintext) }
        let bytes: [UInt8]
        do {
            bytes = try AgeFile.encrypt(plaintext, to: [recipient])
        } catch {
            throw .encryptedStoreIdentity(path: recipientPath, reason: "\(error)")
        }
        try TrustedFile.write(bytes, to: folderPath + "/" + name)
        return self.location(key.group, locked: (try? identity()) == nil)
    }

    @discardableResult
    public nonisolated(nonsending) func delete(_ key: ItemKey) async throws(SecretStoreError) -> Bool {
        guard let (fd, _) = try openGroup(key.group) else { return false }
        defer { close(fd) }
        let lock = try FileLock(path: folder(for: key.group) + "/.lock")
        defer { lock.release() }
        return try remove(Self.fileName(for: key), in: fd, group: key.group)
    }

    @discardableResult
    public nonisolated(nonsending) func deleteAll(in group: SecretGroup) async throws(SecretStoreError) -> Int {
        guard let (fd, names) = try openGroup(group) else { return 0 }
        defer { close(fd) }
        let lock = try FileLock(path: folder(for: group) + "/.lock")
        defer { lock.release() }
        var count = 0
        for name in names where try remove(name, in: fd, group: group) { count += 1 }
        return count
    }

    public nonisolated(nonsending) func storageStatus(for group: SecretGroup) async throws(SecretStoreError) -> StorageStatus {
        try status(for: group)
    }

    /// A save needs the recipient: a store never set up says how to set it up.
    public nonisolated(nonsending) func prepareToSave(in group: SecretGroup) async throws(SecretStoreError) -> StorageStatus {
        guard try recipient() != nil else { throw .encryptedStoreNotSetUp(directory: directory) }
        return try status(for: group)
    }

    private func status(for group: SecretGroup) throws(SecretStoreError) -> StorageStatus {
        let locked = try identity() == nil
        var count = 0
        if let (fd, names) = try openGroup(group) {
            close(fd)
            count = names.count
        }
        return StorageStatus(location: location(group, locked: locked), groupCollectionExists: true, provider: nil, itemCount: count)
    }

    private func location(_ group: SecretGroup, locked: Bool) -> StorageLocation {
        .file(store: Self.name, path: folder(for: group), encrypted: true, isLocked: locked)
    }

    // MARK: Files

    /// The group's folder, open, and its item files' names; nil when it does not exist.
    private func openGroup(_ group: SecretGroup) throws(SecretStoreError) -> (Int32, [String])? {
        guard let fd = try TrustedFile.openFolder(folder(for: group), under: directory) else { return nil }
        return (fd, TrustedFile.names(in: fd).filter { $0.hasSuffix(".age") && !$0.hasPrefix(".") })
    }

    /// The item in the file `name`: sound, or with the problem that makes it refused.
    private func read(_ name: String, in folder: Int32, group: SecretGroup, identity: X25519Identity) throws(SecretStoreError)
        -> StoredItem?
    {
        let path = self.folder(for: group) + "/" + name
        let location = location(group, locked: false)
        let unknown = ItemKey(group: group, issuer: "", clientID: "", account: "", kind: "")
        let contents: TrustedFile.Contents
        do {
            contents = try TrustedFile.read(name, in: folder, path: path)
        } catch {
            switch error {
            case .missing: return nil
            case .failed(let error):
                return StoredItem(key: unknown, label: name, secret: nil, location: location, problem: .refused(error.summary))
            }
        }
        var plaintext: [UInt8]
        do {
            plaintext = try AgeFile.decrypt(contents.bytes, with: [.x25519(identity)])
        } catch {
            return StoredItem(key: unknown, label: name, secret: nil, location: location, problem: .refused("\(path): \(error)"))
        }
        defer { SecretBytes.wipe(&plaintext) }
        return EncryptedFileFormat.decode(plaintext, group: group, name: name, location: location)
    }

    /// Removes the item file `name` (any kind of entry of that name: a link is removed, never
    /// followed). Returns whether there was one.
    private func remove(_ name: String, in folder: Int32, group: SecretGroup) throws(SecretStoreError) -> Bool {
        guard unlinkat(folder, name, 0) == 0 else {
            if errno == ENOENT { return false }
            throw .plainFileIO(path: self.folder(for: group) + "/" + name, operation: "delete", errno: errno)
        }
        guard fsync(folder) == 0 else { throw .plainFileIO(path: self.folder(for: group), operation: "flush", errno: errno) }
        return true
    }
}
