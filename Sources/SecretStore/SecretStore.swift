/// A place that keeps secrets under a group, shared by every program that names the group.
///
/// Implementations, one folder each: ``SecretServiceStore`` (`SecretService/`: the freedesktop
/// Secret Service through libsecret, the default), ``KernelKeyringStore`` (`KernelKeyring/`:
/// the kernel's per-user persistent keyring, memory only) and ``PlainFileStore``
/// (`PlainFile/`: an unencrypted file, only when a user explicitly asks for it). What they
/// share — keys, items, errors, the schema — sits beside this protocol. A store knows nothing
/// of what its secrets mean.
public protocol SecretStore: Sendable {
    /// The items of `query.group` matching the query's filters, wherever they are stored.
    /// Items of ours that cannot be used are returned with ``StoredItem/problem`` set.
    /// - Parameter loadSecrets: also read the secrets (one round trip for all items).
    nonisolated(nonsending) func items(matching query: ItemQuery, loadSecrets: Bool) async throws(SecretStoreError) -> [StoredItem]

    /// The item for `key` with its secret: the sound one; else one of ours for the key that
    /// cannot be used (``StoredItem/problem`` says why, so a caller can tell the user instead of
    /// reporting nothing); else nil. One definition for every store, in the extension below.
    nonisolated(nonsending) func item(for key: ItemKey) async throws(SecretStoreError) -> StoredItem?

    /// Stores `secret` for `key`, replacing the previous item. Afterwards exactly one item
    /// exists for the key; a failed save leaves the previous item as it was. Every store
    /// refuses an invalid key (``SecretStoreError/invalidKey(field:reason:)``) and a secret that
    /// is empty or not UTF-8 text (``SecretStoreError/invalidSecret(reason:)``) before it
    /// touches anything.
    /// - Returns: where the item was written.
    @discardableResult
    nonisolated(nonsending) func save(_ secret: [UInt8], for key: ItemKey, label: String) async throws(SecretStoreError) -> StorageLocation

    /// Deletes every item for `key`. Returns whether there was one.
    @discardableResult
    nonisolated(nonsending) func delete(_ key: ItemKey) async throws(SecretStoreError) -> Bool

    /// Deletes every item of `group`, sound or corrupt. Returns how many were deleted.
    @discardableResult
    nonisolated(nonsending) func deleteAll(in group: SecretGroup) async throws(SecretStoreError) -> Int

    /// The groups that hold at least one item of ours whose kind is `kind`, sorted by name
    /// (so a caller can say which other groups hold a sign-in). Reads no secret.
    nonisolated(nonsending) func groups(holding kind: String) async throws(SecretStoreError) -> [SecretGroup]

    /// Where the group's items are or would be written, and whether that place is usable.
    nonisolated(nonsending) func storageStatus(for group: SecretGroup) async throws(SecretStoreError) -> StorageStatus

    /// Makes sure a save for `group` can succeed now, before anything worth keeping exists (a
    /// sign-in checks this before the browser opens): like ``storageStatus(for:)``, and a
    /// locked collection is unlocked through the provider's prompt, or the error says why not
    /// (``SecretStoreError/locked(collection:)``, ``SecretStoreError/unlockDismissed(collection:)``).
    nonisolated(nonsending) func prepareToSave(in group: SecretGroup) async throws(SecretStoreError) -> StorageStatus
}

extension SecretStore {
    /// A store without locks: its status is the answer.
    public nonisolated(nonsending) func prepareToSave(in group: SecretGroup) async throws(SecretStoreError) -> StorageStatus {
        try await storageStatus(for: group)
    }
}

extension SecretStore {
    /// The sound item for `key`, else an unusable one of ours for it, else nil.
    public nonisolated(nonsending) func item(for key: ItemKey) async throws(SecretStoreError) -> StoredItem? {
        let found = try await items(matching: ItemQuery(key), loadSecrets: true)
        return found.first { $0.problem == nil && $0.key == key } ?? found.first { $0.key == key }
    }

    /// Saves with ``ItemKey/defaultLabel``.
    @discardableResult
    public nonisolated(nonsending) func save(_ secret: [UInt8], for key: ItemKey) async throws(SecretStoreError) -> StorageLocation {
        try await save(secret, for: key, label: key.defaultLabel)
    }
}
