import CKernelKeyring

#if canImport(Glibc)
import Glibc
#endif

/// The unlocked identity of an encrypted-file store, kept in the kernel's **user keyring**
/// (`@u`, `keyrings(7)`): kernel memory shared by every process of the user, gone at reboot
/// (and when the user's last process ends), and at the timeout `authkit unlock --for` set.
///
/// One `user` key per store, `authkit:age-identity:<recipient>` — the recipient (public) names
/// the store, so two stores of one user never read each other's identity. Its payload is an
/// age identity file's text with the lifetime as a comment (`# until: <unix time>`), so status
/// can say until when without asking the kernel for more. Permissions: possessor and user only.
enum IdentityKeyring {
    /// `KEY_SPEC_USER_KEYRING`.
    static let userKeyring: Int32 = -4
    /// Possessor: all; user: view, read, write, search, link, setattr. Nothing for group/other.
    static let permissions: UInt32 = 0x3f3f_0000

    static func description(for recipient: X25519Recipient) -> String {
        "authkit:age-identity:\(recipient)"
    }

    /// Keeps `identity` in the user keyring until `until` (unix time; nil: until the keyring is
    /// cleared at reboot). Replaces what was kept for the same store.
    static func keep(_ identity: X25519Identity, until: Int?) throws(SecretStoreError) {
        var payload = Array("# authkit: the unlocked identity of an encrypted-file store\n".utf8)
        payload += Array("# until: \(until.map(String.init) ?? "reboot")\n".utf8)
        payload += Array(identity.secretKey.utf8) + [0x0A]
        defer { SecretBytes.wipe(&payload) }
        let added = payload.withUnsafeBytes {
            ak_add_key("user", description(for: identity.recipient), $0.baseAddress, $0.count, userKeyring)
        }
        guard added >= 0 else { throw KernelKeyringStore.failure(operation: "keep the unlocked identity", errno: errno) }
        let id = Int32(truncatingIfNeeded: added)
        _ = ak_keyctl_setperm(id, permissions)
        let seconds = until.map { max(1, $0 - Int(time(nil))) } ?? 0
        // 0 clears a timeout an earlier `unlock --for` set on the same key.
        guard ak_keyctl_set_timeout(id, UInt32(clamping: seconds)) == 0 else {
            let code = errno
            _ = ak_keyctl_invalidate(id)
            throw KernelKeyringStore.failure(operation: "set the unlocked identity's lifetime", errno: code)
        }
    }

    /// The identity kept for the store of `recipient` and until when it is kept (nil: until
    /// reboot), or nil when none is (never unlocked, locked, expired).
    static func find(_ recipient: X25519Recipient) throws(SecretStoreError) -> (X25519Identity, until: Int?)? {
        guard let id = search(recipient) else { return nil }
        // Another process of the user may have widened it: narrowed again, or not used.
        if !KernelKeyringStore.isPrivate(id) {
            _ = ak_keyctl_setperm(id, permissions)
            guard KernelKeyringStore.isPrivate(id) else { return nil }
        }
        var payload: [UInt8]
        do {
            payload = try KernelKeyringStore.read(id)
        } catch {
            // Expired or revoked between the search and the read: locked.
            return nil
        }
        defer { SecretBytes.wipe(&payload) }
        var until: Int?
        for line in payload.split(separator: 0x0A) where line.starts(with: "# until: ".utf8) {
            until = Int(String(decoding: line.dropFirst("# until: ".utf8.count), as: UTF8.self))
        }
        let identities: [X25519Identity]
        do {
            identities = try AgeIdentityFile.parse(payload)
        } catch {
            throw .encryptedStoreIdentity(path: "the kernel keyring's key \(description(for: recipient))", reason: "\(error)")
        }
        guard let identity = identities.first(where: { $0.recipient == recipient }) else { return nil }
        return (identity, until)
    }

    /// Forgets the store's identity. Returns whether one was kept.
    @discardableResult
    static func forget(_ recipient: X25519Recipient) -> Bool {
        guard let id = search(recipient) else { return false }
        _ = ak_keyctl_invalidate(id)
        return true
    }

    private static func search(_ recipient: X25519Recipient) -> Int32? {
        let found = ak_keyctl_search(userKeyring, "user", description(for: recipient))
        guard found >= 0 else { return nil }
        return Int32(truncatingIfNeeded: found)
    }
}
