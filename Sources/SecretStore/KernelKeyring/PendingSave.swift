import Age
import CKernelKeyring

#if canImport(Glibc)
import Glibc
#endif

/// Where a secret waits when its store refused to save it and losing it is not an option — a
/// rotated refresh token, which the provider will not issue again: the user's persistent kernel
/// keyring (memory only, gone at reboot or after `persistent_keyring_expiry` idle), in a keyring
/// `authkit-pending:<group>`, one `user` key per item key, readable only by its possessor — a
/// process of the user that asks the kernel for the persistent keyring — never by the user's
/// other processes by serial number.
///
/// A pending secret names what it replaces (`replacing`, the caller's tag for the record it
/// was derived from), so that the caller can tell whether it still applies. The caller saves it
/// to its store as soon as it can, then forgets it.
package enum PendingSave {
    /// How long a pending secret waits at most (the persistent keyring's own default idle life).
    static let lifetimeSeconds: UInt32 = 3 * 24 * 3600

    /// Keeps `secret` for `key`, replacing an earlier pending one.
    package static func keep(_ secret: [UInt8], for key: ItemKey, replacing: String) throws(SecretStoreError) {
        let ring = try keyring(key.group, create: true) ?? 0
        var payload = Array("replaces \(replacing)\n".utf8) + secret
        defer { SecretBytes.wipe(&payload) }
        let added = payload.withUnsafeBytes { ak_add_key("user", KeyDescription.description(for: key), $0.baseAddress, $0.count, ring) }
        guard added >= 0 else { throw KernelKeyringStore.failure(operation: "keep the unsaved item", errno: errno) }
        let id = Int32(truncatingIfNeeded: added)
        _ = ak_keyctl_set_timeout(id, lifetimeSeconds)
        do {
            try KernelKeyringStore.makePrivate(id, what: "the unsaved item")
        } catch {
            _ = ak_keyctl_invalidate(id)
            throw error
        }
    }

    /// The pending secret for `key` and what it replaces, or nil.
    package static func find(_ key: ItemKey) -> (secret: [UInt8], replacing: String)? {
        guard let ring = try? keyring(key.group, create: false),
            let id = member(KeyDescription.description(for: key), of: ring), KernelKeyringStore.isPrivate(id),
            var payload = try? KernelKeyringStore.read(id)
        else { return nil }
        defer { SecretBytes.wipe(&payload) }
        guard let newline = payload.firstIndex(of: 0x0A), payload.starts(with: "replaces ".utf8) else { return nil }
        let replacing = String(decoding: payload[9..<newline], as: UTF8.self)
        return (Array(payload[(newline + 1)...]), replacing)
    }

    /// Forgets the pending secret for `key` (nil: every one of `group`).
    package static func forget(_ key: ItemKey) {
        guard let ring = try? keyring(key.group, create: false), let id = member(KeyDescription.description(for: key), of: ring) else {
            return
        }
        _ = ak_keyctl_invalidate(id)
    }

    /// Forgets every pending secret of `group`.
    package static func forgetAll(in group: SecretGroup) {
        guard let ring = try? keyring(group, create: false) else { return }
        _ = ak_keyctl_invalidate(ring)
    }

    private static func keyring(_ group: SecretGroup, create: Bool) throws(SecretStoreError) -> Int32? {
        let persistent = try KernelKeyringStore.persistentKeyring()
        let description = "authkit-pending:" + group.name
        let found = ak_keyctl_search(persistent, "keyring", description)
        if found >= 0 {
            let id = Int32(truncatingIfNeeded: found)
            try KernelKeyringStore.makePrivate(id, what: "the keyring of unsaved items")
            return id
        }
        guard create else { return nil }
        let made = ak_add_key("keyring", description, nil, 0, persistent)
        guard made >= 0 else { throw KernelKeyringStore.failure(operation: "keep the unsaved item", errno: errno) }
        let id = Int32(truncatingIfNeeded: made)
        try KernelKeyringStore.makePrivate(id, what: "the keyring of unsaved items")
        return id
    }

    private static func member(_ description: String, of ring: Int32) -> Int32? {
        let found = ak_keyctl_search(ring, "user", description)
        return found >= 0 ? Int32(truncatingIfNeeded: found) : nil
    }
}
