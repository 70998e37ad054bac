import Age
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The store's identity: where it is found, and the unlock, lock and first use of the CLI.
extension EncryptedFileStore {
    // MARK: Identity

    /// Where the identity that opens the store was found.
    package enum IdentitySource: Sendable, Equatable {
        /// The kernel user keyring (`authkit unlock`), until a unix time or until reboot.
        case keyring(until: Int?)
        /// A file handed to a service: systemd's credential, or `AUTHKIT_IDENTITY_FILE`.
        case file(String)
    }

    /// The store's recipient, or nil when the store has none yet.
    func recipient() throws(SecretStoreError) -> X25519Recipient? {
        guard let bytes = try TrustedFile.read("recipient", under: directory) else { return nil }
        let text = String(decoding: bytes, as: UTF8.self).filter { !$0.isWhitespace }
        do {
            return try X25519Recipient(text)
        } catch {
            throw .encryptedStoreIdentity(path: recipientPath, reason: "\(error)")
        }
    }

    /// The recipient, as `age -r` takes it; nil when the store has none yet.
    package func recipientText() throws(SecretStoreError) -> String? {
        try recipient()?.description
    }

    /// The identity file a service was handed: the one `AUTHKIT_IDENTITY_FILE` names, else
    /// systemd's credential when there is one; nil for a person's store.
    func handedIdentityPath() -> String? {
        func variable(_ name: String) -> String? {
            let value = environment == nil ? getenv(name).map { String(cString: $0) } : environment?[name]
            return value.flatMap { $0.isEmpty ? nil : $0 }
        }
        if let path = variable(Self.identityFileVariable) { return path }
        guard let credentials = variable("CREDENTIALS_DIRECTORY") else { return nil }
        let path = credentials + "/" + Self.credentialName
        return access(path, F_OK) == 0 ? path : nil
    }

    /// The identity that opens the store and where it was found, or nil when it is locked.
    func identity() throws(SecretStoreError) -> (identity: X25519Identity, source: IdentitySource)? {
        let recipient = try recipient()
        if let path = handedIdentityPath() {
            let identity = try Self.serviceIdentity(path, recipient: recipient)
            return (identity, .file(path))
        }
        guard let recipient else { return nil }
        return try IdentityKeyring.find(recipient).map { ($0.0, .keyring(until: $0.until)) }
    }

    /// The unsealed identity file a service was handed; it must match the store's recipient.
    static func serviceIdentity(_ path: String, recipient: X25519Recipient?) throws(SecretStoreError) -> X25519Identity {
        guard var bytes = try TrustedFile.read(path) else {
            throw .encryptedStoreIdentity(path: path, reason: "it does not exist")
        }
        defer { SecretBytes.wipe(&bytes) }
        guard !AgeIdentityFile.isSealed(bytes) else {
            throw .encryptedStoreIdentity(
                path: path,
                reason: "it is sealed with a passphrase, and a service cannot type one; hand it the identity itself "
                    + "(`age -d identity.age | systemd-creds encrypt --name=authkit-identity - FILE`)")
        }
        let identities: [X25519Identity]
        do {
            identities = try AgeIdentityFile.parse(bytes)
        } catch {
            throw .encryptedStoreIdentity(path: path, reason: "\(error)")
        }
        guard let recipient else {
            guard let first = identities.first else { throw .encryptedStoreIdentity(path: path, reason: "no identity in it") }
            return first
        }
        guard let identity = identities.first(where: { $0.recipient == recipient }) else {
            throw .encryptedStoreIdentity(path: path, reason: "it is not the identity of this store (recipient \(recipient))")
        }
        return identity
    }

    // MARK: Locking and unlocking (the CLI's `unlock`, `lock`, first use)

    /// Whether the store is set up, and whether and how it is unlocked here.
    package enum LockState: Sendable, Equatable {
        /// No identity yet.
        case notSetUp
        /// Set up, and no identity is available here.
        case locked
        /// Readable here, with the identity from `source`.
        case unlocked(IdentitySource)
    }

    /// The store's state here.
    package func lockState() throws(SecretStoreError) -> LockState {
        if let (_, source) = try identity() { return .unlocked(source) }
        return try recipient() == nil && access(identityPath, F_OK) != 0 ? .notSetUp : .locked
    }

    /// Creates the store's identity, sealed with `passphrase` (scrypt, work factor 2^18: about
    /// half a second — run it on a thread of its own), and writes the recipient beside it; the
    /// new identity is kept unlocked until reboot. Refuses when the store has one.
    /// - Returns: the recipient.
    package func createIdentity(passphrase: SecretBytes) throws(SecretStoreError) -> String {
        let folder = try TrustedFile.makeFolder(directory)
        close(folder)
        guard access(identityPath, F_OK) != 0, try recipient() == nil else {
            throw .encryptedStoreIdentity(path: identityPath, reason: "the store already has an identity")
        }
        let identity: X25519Identity
        let sealed: [UInt8]
        do throws(AgeError) {
            identity = try X25519Identity.generate()
            sealed = try AgeIdentityFile.seal(identity, passphrase: try AgePassphrase(bytes: passphrase))
        } catch {
            throw .encryptedStoreIdentity(path: identityPath, reason: "\(error)")
        }
        try TrustedFile.write(sealed, to: identityPath)
        try TrustedFile.write(Array("\(identity.recipient)\n".utf8), to: recipientPath)
        try IdentityKeyring.keep(identity, until: nil)
        return identity.recipient.description
    }

    /// Opens the sealed identity with `passphrase` (scrypt: run it on a thread of its own) and
    /// keeps it in the kernel user keyring until `until` (unix time; nil: until reboot).
    package func unlock(passphrase: SecretBytes, until: Int?) throws(SecretStoreError) {
        let identity = try openIdentity(passphrase: passphrase)
        try IdentityKeyring.keep(identity, until: until)
    }

    /// Forgets the unlocked identity. Returns whether it was unlocked in the keyring.
    @discardableResult
    package func lock() throws(SecretStoreError) -> Bool {
        guard let recipient = try recipient() else { return false }
        return IdentityKeyring.forget(recipient)
    }

    /// Seals the identity again with `new` (the token files stay as they are). A wrong `old`
    /// changes nothing.
    package func changePassphrase(old: SecretBytes, new: SecretBytes) throws(SecretStoreError) {
        let identity = try openIdentity(passphrase: old)
        let sealed: [UInt8]
        do throws(AgeError) {
            sealed = try AgeIdentityFile.seal(identity, passphrase: try AgePassphrase(bytes: new))
        } catch {
            throw .encryptedStoreIdentity(path: identityPath, reason: "\(error)")
        }
        try TrustedFile.write(sealed, to: identityPath)
    }

    func openIdentity(passphrase: SecretBytes) throws(SecretStoreError) -> X25519Identity {
        guard let sealed = try TrustedFile.read("identity.age", under: directory) else {
            throw .encryptedStoreNotSetUp(directory: directory)
        }
        let identities: [X25519Identity]
        do {
            identities = try AgeIdentityFile.open(sealed, passphrase: try AgePassphrase(bytes: passphrase))
        } catch .wrongPassphrase {
            throw .wrongPassphrase(path: identityPath)
        } catch {
            throw .encryptedStoreIdentity(path: identityPath, reason: "\(error)")
        }
        let recipient = try recipient()
        guard let identity = identities.first(where: { recipient == nil || $0.recipient == recipient }) else {
            throw .encryptedStoreIdentity(path: identityPath, reason: "it does not match the recipient in \(recipientPath)")
        }
        if recipient == nil {
            try TrustedFile.write(Array("\(identity.recipient)\n".utf8), to: recipientPath)
        }
        return identity
    }
}
