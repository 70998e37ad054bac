import SecretStore
import Synchronization

/// The DPoP keys of a group's sign-ins in its store, each in an item of its own (kind
/// `dpop-key THUMBPRINT`) beside the sign-in's record, read once per process and checked
/// against the thumbprint the record names. A new sign-in's key is a new item: the record
/// stored before keeps its key until the new record has replaced it.
package struct DPoPKeyItems: Sendable {
    let store: any SecretStore
    /// The TPMs a stored key may name: the kernel's resource manager, and the one
    /// `AUTHKIT_TPM` names (a stored TCTI is outside input: never a device or host it chose).
    let allowedTCTIs: Set<String>
    private let cache = Cache()

    init(store: any SecretStore, environment: [String: String]) {
        self.store = store
        var allowed: Set<String> = [TPMChoice.device]
        if case .tcti(let tcti)? = try? TPMChoice(environment: environment) { allowed.insert(tcti) }
        allowedTCTIs = allowed
    }

    private final class Cache: Sendable {
        let keys = Mutex<[String: DPoPKey]>([:])
    }

    /// The item of the key `thumbprint` of the sign-in stored under `recordKey`.
    static func itemKey(for recordKey: ItemKey, thumbprint: String) -> ItemKey {
        var key = recordKey
        key.kind = ItemKind.dpopKey(thumbprint: thumbprint).stored
        return key
    }

    /// The key `record` (stored under `recordKey`) is bound to; nil for a bearer sign-in.
    package func key(for record: TokenRecord, at recordKey: ItemKey) async throws(AuthKitError) -> DPoPKey? {
        guard record.isDPoP, let thumbprint = record.dpopThumbprint else { return nil }
        if let known = cache.keys.withLock({ $0[thumbprint] }) { return known }
        let item: StoredItem?
        do { item = try await store.item(for: Self.itemKey(for: recordKey, thumbprint: thumbprint)) } catch { throw .storage(error) }
        guard let item else { throw .dpop(.keyMissing(account: record.account)) }
        let bytes: [UInt8]
        do { bytes = try item.validatedSecret() } catch { throw .storage(error) }
        let key: DPoPKey
        do { key = try DPoPKey.read(bytes, thumbprint: thumbprint, account: record.account, allowedTCTIs: allowedTCTIs) } catch {
            throw .dpop(error)
        }
        cache.keys.withLock { $0[thumbprint] = key }
        return key
    }

    /// Stores the key of a new sign-in (under `recordKey`), before its record.
    package func save(_ key: DPoPKey, for recordKey: ItemKey) async throws(AuthKitError) {
        let itemKey = Self.itemKey(for: recordKey, thumbprint: key.thumbprint)
        let bytes: [UInt8]
        do { bytes = try key.stored() } catch { throw .dpop(error) }
        do {
            _ = try await store.save(bytes, for: itemKey, label: itemKey.defaultLabel + " DPoP key")
        } catch {
            throw .storage(error)
        }
        cache.keys.withLock { $0[key.thumbprint] = key }
    }

    /// Removes the keys of the account under `recordKey` other than `kept` (the key of the
    /// record stored now; nil: a bearer sign-in keeps none). Best effort: a key left behind
    /// is an orphan item, never a lost sign-in.
    package func removeOthers(than kept: String?, for recordKey: ItemKey) async {
        let query = ItemQuery(group: recordKey.group, issuer: recordKey.issuer, clientID: recordKey.clientID, account: recordKey.account)
        guard let items = try? await store.items(matching: query, loadSecrets: false) else { return }
        for item in items {
            guard case .dpopKey(let thumbprint)? = ItemKind(stored: item.key.kind), thumbprint != kept else { continue }
            _ = try? await store.delete(item.key)
            cache.keys.withLock { $0[thumbprint] = nil }
        }
    }

    /// Forgets the keys read so far (a sign-out): the next use reads the store again.
    package func forgetCached() {
        cache.keys.withLock { $0.removeAll() }
    }
}
