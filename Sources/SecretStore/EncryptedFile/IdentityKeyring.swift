import Age
import CKernelKeyring

#if canImport(Glibc)
import Glibc
#endif

/// The unlocked state of an encrypted-file store, kept in the user's **persistent kernel
/// keyring** (`persistent-keyring(7)`, as ``KernelKeyringStore`` uses it): kernel memory shared by
/// every process of the user that asks the kernel for it — in any session keyring, a systemd
/// service's private one too — gone at reboot, after `persistent_keyring_expiry` seconds unused
/// (3 days by default), at the timeout `authkit unlock --for` set, or on `authkit lock`.
///
/// One keyring per unlock, `authkit:age-unlocked:<recipient>` — the recipient (public) names
/// the store, so two stores of one user never read each other's identity — holding one `user`
/// key, `identity`: an age identity file's text with the lifetime as a comment (`# until: <unix
/// time>|reboot`), so status says until when without asking for more. Nothing decrypted is
/// kept beside it: a token file is opened anew by each read.
///
/// Permissions of every key: its possessor only (``KernelKeyringStore/permissions``): a process
/// of the user that has not asked for the persistent keyring — a sandbox with a session keyring
/// of its own guessing serial numbers — can see that the keys exist, never read them.
enum IdentityKeyring {
    static func description(for recipient: X25519Recipient) -> String {
        "authkit:age-unlocked:\(recipient)"
    }

    /// Keeps `identity` unlocked until `until` (unix time; nil: until the keyring is cleared at
    /// reboot), in a new keyring that replaces an earlier unlock (and its cache).
    static func keep(_ identity: X25519Identity, until: Int?) throws(SecretStoreError) {
        forget(identity.recipient)
        let persistent = try KernelKeyringStore.persistentKeyring()
        let made = ak_add_key("keyring", description(for: identity.recipient), nil, 0, persistent)
        guard made >= 0 else { throw KernelKeyringStore.failure(operation: "keep the unlocked identity", errno: errno) }
        let ring = Int32(truncatingIfNeeded: made)
        _ = ak_keyctl_setperm(ring, KernelKeyringStore.permissions)
        var payload = Array("# authkit: the unlocked identity of an encrypted-file store\n".utf8)
        payload += Array("# until: \(until.map(String.init) ?? "reboot")\n".utf8)
        payload += Array(identity.secretKey.utf8) + [0x0A]
        defer { SecretBytes.wipe(&payload) }
        do {
            try add("identity", payload, to: ring, until: until)
            try setLifetime(ring, until: until)
        } catch {
            _ = ak_keyctl_invalidate(ring)
            throw error
        }
    }

    /// The unlock's keyring for the store of `recipient`, or nil when it is locked.
    static func ring(_ recipient: X25519Recipient) -> Int32? {
        guard let persistent = try? KernelKeyringStore.persistentKeyring() else { return nil }
        let found = ak_keyctl_search(persistent, "keyring", description(for: recipient))
        guard found >= 0 else { return nil }
        let id = Int32(truncatingIfNeeded: found)
        // Another process of the user may have widened it: narrowed again, or not used.
        guard (try? KernelKeyringStore.makePrivate(id, what: "the unlocked identity")) != nil else { return nil }
        return id
    }

    /// The identity kept for the store of `recipient` and until when (nil: until reboot), or
    /// nil when it is locked (never unlocked, locked, expired).
    static func find(_ recipient: X25519Recipient) throws(SecretStoreError) -> (X25519Identity, until: Int?)? {
        guard let ring = ring(recipient), var payload = read("identity", in: ring) else { return nil }
        defer { SecretBytes.wipe(&payload) }
        let identities: [X25519Identity]
        do {
            identities = try AgeIdentityFile.parse(payload)
        } catch {
            throw .encryptedStoreIdentity(path: "the kernel keyring's \(description(for: recipient))", reason: "\(error)")
        }
        guard let identity = identities.first(where: { $0.recipient == recipient }) else { return nil }
        return (identity, until(payload))
    }

    /// Until when the store of `recipient` is unlocked (`.some(nil)`: until reboot), without
    /// reading the identity; nil when it is locked.
    static func lifetime(_ recipient: X25519Recipient) -> Int?? {
        guard let ring = ring(recipient), var payload = read("identity", in: ring) else { return nil }
        defer { SecretBytes.wipe(&payload) }
        return .some(until(payload))
    }

    /// Forgets the store's unlocked identity and its cache. Returns whether it was unlocked.
    @discardableResult
    static func forget(_ recipient: X25519Recipient) -> Bool {
        var found = false
        while let ring = ring(recipient) {
            for member in (try? KernelKeyringStore.members(of: ring)) ?? [] { _ = ak_keyctl_invalidate(member) }
            _ = ak_keyctl_invalidate(ring)
            found = true
        }
        return found
    }

    // MARK: Keys

    private static func add(_ name: String, _ payload: [UInt8], to ring: Int32, until: Int?) throws(SecretStoreError) {
        let added = payload.withUnsafeBytes { ak_add_key("user", name, $0.baseAddress, $0.count, ring) }
        guard added >= 0 else { throw KernelKeyringStore.failure(operation: "keep the unlocked identity", errno: errno) }
        let id = Int32(truncatingIfNeeded: added)
        _ = ak_keyctl_setperm(id, KernelKeyringStore.permissions)
        do {
            try setLifetime(id, until: until)
        } catch {
            _ = ak_keyctl_invalidate(id)
            throw error
        }
    }

    private static func setLifetime(_ id: Int32, until: Int?) throws(SecretStoreError) {
        guard let until else { return }
        guard ak_keyctl_set_timeout(id, UInt32(clamping: max(1, until - Int(time(nil))))) == 0 else {
            throw KernelKeyringStore.failure(operation: "set the unlocked identity's lifetime", errno: errno)
        }
    }

    private static func read(_ name: String, in ring: Int32) -> [UInt8]? {
        let found = ak_keyctl_search(ring, "user", name)
        guard found >= 0 else { return nil }
        let id = Int32(truncatingIfNeeded: found)
        guard KernelKeyringStore.isPrivate(id) else { return nil }
        // Expired or revoked between the search and the read: nothing.
        return try? KernelKeyringStore.read(id)
    }

    private static func until(_ payload: [UInt8]) -> Int? {
        for line in payload.split(separator: 0x0A) where line.starts(with: "# until: ".utf8) {
            return Int(String(decoding: line.dropFirst("# until: ".utf8.count), as: UTF8.self))
        }
        return nil
    }
}
