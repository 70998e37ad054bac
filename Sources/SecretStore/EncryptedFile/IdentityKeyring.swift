import CKernelKeyring

#if canImport(Glibc)
import Glibc
#endif

/// The unlocked state of an encrypted-file store, kept in the kernel's **user keyring** (`@u`,
/// `keyrings(7)`): kernel memory shared by every process of the user, gone at reboot (and
/// when the user's last process ends), at the timeout `authkit unlock --for` set, or on
/// `authkit lock`.
///
/// One keyring per unlock, `authkit:age-unlocked:<recipient>` — the recipient (public) names
/// the store, so two stores of one user never read each other's identity — holding:
/// * `identity`: a `user` key, an age identity file's text with the lifetime as a comment
///   (`# until: <unix time>|reboot`), so status says until when without asking for more;
/// * `cache:<group>/<file>`: the plaintext of an item file already opened, with the file's
///   identity (device, inode, size, mtime, ctime) on its first line, so that `authkit token`
///   reads an unchanged file without loading libcrypto. It holds nothing a process of the user
///   could not already decrypt with `identity` beside it, and it goes with it: locking
///   invalidates the keyring and everything in it, and every key carries the same timeout.
///
/// Permissions of every key: possessor and user only.
enum IdentityKeyring {
    /// `KEY_SPEC_USER_KEYRING`.
    static let userKeyring: Int32 = -4
    /// Possessor: all; user: view, read, write, search, link, setattr. Nothing for group/other.
    static let permissions: UInt32 = 0x3f3f_0000
    /// Cached plaintexts stop at this size (the user's key quota is 20 000 bytes by default).
    static let largestCached = 8192

    static func description(for recipient: X25519Recipient) -> String {
        "authkit:age-unlocked:\(recipient)"
    }

    /// Keeps `identity` unlocked until `until` (unix time; nil: until the keyring is cleared at
    /// reboot), in a new keyring that replaces an earlier unlock (and its cache).
    static func keep(_ identity: X25519Identity, until: Int?) throws(SecretStoreError) {
        forget(identity.recipient)
        let made = ak_add_key("keyring", description(for: identity.recipient), nil, 0, userKeyring)
        guard made >= 0 else { throw KernelKeyringStore.failure(operation: "keep the unlocked identity", errno: errno) }
        let ring = Int32(truncatingIfNeeded: made)
        _ = ak_keyctl_setperm(ring, permissions)
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
        let found = ak_keyctl_search(userKeyring, "keyring", description(for: recipient))
        guard found >= 0 else { return nil }
        let id = Int32(truncatingIfNeeded: found)
        // Another process of the user may have widened it: narrowed again, or not used.
        if !KernelKeyringStore.isPrivate(id) {
            _ = ak_keyctl_setperm(id, permissions)
            guard KernelKeyringStore.isPrivate(id) else { return nil }
        }
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

    // MARK: The plaintext cache

    /// The cached plaintext of the item file `name` of `group`, when the file is still the one
    /// it came from (`signature`).
    static func cached(_ ring: Int32, group: SecretGroup, name: String, signature: String) -> [UInt8]? {
        guard var payload = read("cache:\(group.name)/\(name)", in: ring) else { return nil }
        defer { SecretBytes.wipe(&payload) }
        guard let newline = payload.firstIndex(of: 0x0A), payload[..<newline].elementsEqual(signature.utf8) else { return nil }
        return Array(payload[(newline + 1)...])
    }

    /// Caches the plaintext of a sound item file; a refusal (over the quota) only costs speed.
    static func cache(_ ring: Int32, group: SecretGroup, name: String, signature: String, plaintext: [UInt8]) {
        guard plaintext.count <= largestCached, let until = lifetimeOfRing(ring) else { return }
        var payload = Array(signature.utf8) + [0x0A] + plaintext
        defer { SecretBytes.wipe(&payload) }
        try? add("cache:\(group.name)/\(name)", payload, to: ring, until: until)
    }

    // MARK: Keys

    private static func add(_ name: String, _ payload: [UInt8], to ring: Int32, until: Int?) throws(SecretStoreError) {
        let added = payload.withUnsafeBytes { ak_add_key("user", name, $0.baseAddress, $0.count, ring) }
        guard added >= 0 else { throw KernelKeyringStore.failure(operation: "keep the unlocked identity", errno: errno) }
        let id = Int32(truncatingIfNeeded: added)
        _ = ak_keyctl_setperm(id, permissions)
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

    /// The `until` of the ring's identity: `.some(nil)` until reboot, nil when unreadable.
    private static func lifetimeOfRing(_ ring: Int32) -> Int?? {
        guard var payload = read("identity", in: ring) else { return nil }
        defer { SecretBytes.wipe(&payload) }
        return .some(until(payload))
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
