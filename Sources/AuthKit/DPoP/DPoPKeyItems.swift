import SecretStore
import Synchronization

/// The DPoP keys of a group's sign-ins in its store, each in an item of its own (kind
/// `dpop-key`) beside the sign-in's record, read once per process and checked against the
/// thumbprint the record names.
package struct DPoPKeyItems: Sendable {
    let store: any SecretStore
    private let cache = Cache()

    init(store: any SecretStore) {
        self.store = store
    }

    private final class Cache: Sendable {
        let keys = Mutex<[String: DPoPKey]>([:])
    }

    /// The item of the key of the sign-in stored under `recordKey`.
    static func itemKey(for recordKey: ItemKey) -> ItemKey {
        var key = recordKey
        key.kind = ItemKind.dpopKey.stored
        return key
    }

    /// The key `record` (stored under `recordKey`) is bound to; nil for a bearer sign-in.
    package func key(for record: TokenRecord, at recordKey: ItemKey) async throws(AuthKitError) -> DPoPKey? {
        guard record.isDPoP, let thumbprint = record.dpopThumbprint else { return nil }
        if let known = cache.keys.withLock({ $0[thumbprint] }) { return known }
        let item: StoredItem?
        do { item = try await store.item(for: Self.itemKey(for: recordKey)) } catch { throw .storage(error) }
        guard let item else { throw .dpop(.keyMissing(account: record.account)) }
        let bytes: [UInt8]
        do { bytes = try item.validatedSecret() } catch { throw .storage(error) }
        let key: DPoPKey
        do { key = try DPoPKey.read(bytes, thumbprint: thumbprint, account: record.account) } catch { throw .dpop(error) }
        cache.keys.withLock { $0[thumbprint] = key }
        return key
    }

    /// Stores the key of a new sign-in (under `recordKey`), before its record; with nil, removes
    /// an earlier sign-in's key (the new one is a bearer sign-in).
    package func save(_ key: DPoPKey?, for recordKey: ItemKey) async throws(AuthKitError) {
        let itemKey = Self.itemKey(for: recordKey)
        do {
            if let key {
                let bytes: [UInt8]
                do { bytes = try key.stored() } catch { throw AuthKitError.dpop(error) }
                _ = try await store.save(bytes, for: itemKey, label: itemKey.defaultLabel + " DPoP key")
                cache.keys.withLock { $0[key.thumbprint] = key }
            } else {
                _ = try await store.delete(itemKey)
            }
        } catch let error as AuthKitError {
            throw error
        } catch let error as SecretStoreError {
            throw .storage(error)
        } catch {
            throw .dpop(.keyUnavailable("\(error)"))
        }
    }
}
