/// An age X25519 recipient, `age1…` (C2SP age, "X25519 recipient type"): a public key files are
/// encrypted to. Saving needs only this; reading needs the matching ``X25519Identity``.
package struct X25519Recipient: Sendable, Equatable, CustomStringConvertible {
    package static let label: StaticString = "age-encryption.org/v1/X25519"

    package let publicKey: [UInt8]

    /// Parses the Bech32 form: human-readable part `age`, lower case, 32 bytes.
    package init(_ text: String) throws(AgeError) {
        let (hrp, data) = try Bech32.decode(text)
        guard hrp == "age" else { throw .malformedKey("an X25519 recipient starts with age1") }
        guard data.count == X25519.keyLength else { throw .malformedKey("an X25519 recipient holds 32 bytes") }
        publicKey = data
    }

    package init(publicKey: [UInt8]) {
        self.publicKey = publicKey
    }

    /// The `age1…` form.
    package var description: String { Bech32.encode(hrp: "age", data: publicKey) }

    /// The stanza wrapping `fileKey` to this recipient: an ephemeral share, and the file key
    /// sealed with ChaCha20-Poly1305 (zero nonce) under HKDF-SHA-256(ikm: shared secret,
    /// salt: share ‖ recipient, info: "age-encryption.org/v1/X25519").
    package func wrap(_ fileKey: SecretBytes) throws(AgeError) -> AgeStanza {
        let ephemeral = try AgeCrypto.randomSecret(X25519.keyLength)
        let share = try X25519.publicKey(of: ephemeral)
        guard let shared = try X25519.sharedSecret(ephemeral, publicKey) else {
            throw .malformedKey("the recipient is not a usable X25519 public key (a low-order point)")
        }
        let wrapKey = try AgeCrypto.hkdf(shared, salt: share + publicKey, info: Self.label)
        let body = try fileKey.withUnsafeBytes { (key) throws(AgeError) in
            try ChaChaPoly.seal(key: wrapKey, nonce: [UInt8](repeating: 0, count: ChaChaPoly.nonceLength), key)
        }
        return AgeStanza(type: "X25519", arguments: [AgeBase64.encode(share)], body: body)
    }
}
