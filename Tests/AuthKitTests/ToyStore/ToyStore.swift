import SecretStore
import Synchronization

/// A store added from outside authkit's sources, to show what adding one takes: this folder
/// and one list, `StoreKinds.$added.withValue([ToyStore.self])` (in `ToyStoreTests`). Everything is in
/// this process's memory, so it only serves a test.
final class ToyStore: SecretStore, StoreKind {
    static let name = "toy"
    static let summary = "this process's memory; a test's toy"
    static let isPlainText = false
    static let agentRecheckInterval: Double? = 0

    /// One toy store per process, as the kernel keyring is one per user.
    static let shared = ToyStore()

    static func make(_ context: StoreContext) -> any SecretStore { shared }

    private struct Item {
        var label: String
        var secret: [UInt8]
    }

    private let items = Mutex<[ItemKey: Item]>([:])

    private var location: StorageLocation {
        .file(store: Self.name, path: "memory", encrypted: false, isLocked: false)
    }

    func items(matching query: ItemQuery, loadSecrets: Bool) async throws(SecretStoreError) -> [StoredItem] {
        let location = self.location
        return items.withLock { items in
            items.filter { query.matches($0.key) }.sorted { $0.key.description < $1.key.description }.map {
                StoredItem(key: $0.key, label: $0.value.label, secret: loadSecrets ? $0.value.secret : nil, location: location)
            }
        }
    }

    /// The most items the toy keeps; one more is its own failure, in its own words.
    static let capacity = 64

    func save(_ secret: [UInt8], for key: ItemKey, label: String) async throws(SecretStoreError) -> StorageLocation {
        try ItemSchema.checkSave(secret, for: key)
        if items.withLock({ $0.count >= Self.capacity && $0[key] == nil }) {
            throw .store(StoreFailure(store: Self.name, summary: "the toy store is full", hint: "sign somebody out of it"))
        }
        items.withLock { $0[key] = Item(label: label, secret: secret) }
        return location
    }

    func delete(_ key: ItemKey) async throws(SecretStoreError) -> Bool {
        items.withLock { $0.removeValue(forKey: key) != nil }
    }

    func deleteAll(in group: SecretGroup) async throws(SecretStoreError) -> Int {
        items.withLock { items in
            let keys = items.keys.filter { $0.group == group }
            for key in keys { items[key] = nil }
            return keys.count
        }
    }

    func groups(holding kind: String) async throws(SecretStoreError) -> [SecretGroup] {
        let groups = items.withLock { Set($0.keys.filter { $0.kind == kind }.map(\.group)) }
        return groups.sorted { $0.name < $1.name }
    }

    func storageStatus(for group: SecretGroup) async throws(SecretStoreError) -> StorageStatus {
        let count = items.withLock { $0.keys.filter { $0.group == group }.count }
        return StorageStatus(location: location, groupCollectionExists: true, provider: nil, itemCount: count)
    }
}
