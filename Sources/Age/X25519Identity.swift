/// An age X25519 identity, `AGE-SECRET-KEY-1…` (C2SP age, "X25519 recipient type"): the secret
/// scalar that opens files encrypted to its ``recipient``.
///
/// Its `description` names only the recipient; the secret form is ``secretKey``, asked for
/// by name.
package struct X25519Identity: Sendable, CustomStringConvertible {
    package let scalar: SecretBytes
    package let recipient: X25519Recipient

    /// Parses the Bech32 form: human-readable part `AGE-SECRET-KEY-`, upper case, 32 bytes.
    package init(secretKey text: String) throws(AgeError) {
        var (hrp, data) = try Bech32.decode(text)
        defer { SecretBytes.wipe(&data) }
        guard hrp == "AGE-SECRET-KEY-" else { throw .malformedKey("an X25519 identity starts with AGE-SECRET-KEY-1, in upper case") }
        guard data.count == X25519.keyLength else { throw .malformedKey("an X25519 identity holds 32 bytes") }
        try self.init(scalar: SecretBytes(data))
    }

    package init(scalar: SecretBytes) throws(AgeError) {
        self.scalar = scalar
        recipient = X25519Recipient(publicKey: try X25519.publicKey(of: scalar))
    }

    /// A new identity from 32 random bytes (X25519 clamps the scalar itself).
    package static func generate() throws(AgeError) -> X25519Identity {
        try X25519Identity(scalar: try AgeCrypto.randomSecret(X25519.keyLength))
    }

    /// The `AGE-SECRET-KEY-1…` form. Secret: write it only where the identity belongs.
    package var secretKey: String {
        let text = try? scalar.withUnsafeBytes { Bech32.encode(hrp: "AGE-SECRET-KEY-", data: $0).uppercased() }
        return text ?? ""
    }

    package var description: String { "X25519 identity of \(recipient)" }

    /// The file key from the first X25519 stanza this identity opens; `nil` when none does.
    /// A malformed X25519 stanza is an error (C2SP age, "X25519 recipient type"), stanzas of
    /// other types are skipped.
    package func unwrap(_ stanzas: [AgeStanza]) throws(AgeError) -> SecretBytes? {
        for stanza in stanzas where stanza.type == "X25519" {
            guard stanza.arguments.count == 1 else { throw .malformedHeader("an X25519 stanza has one argument") }
            guard let share = AgeBase64.decodeUnpadded(stanza.arguments[0].utf8), share.count == X25519.keyLength else {
                throw .malformedHeader("an X25519 stanza's share is not 32 bytes in canonical base64")
            }
            guard stanza.body.count == 16 + ChaChaPoly.tagLength else {
                throw .malformedHeader("an X25519 stanza does not wrap a 16-byte file key")
            }
            guard let shared = try X25519.sharedSecret(scalar, share) else {
                throw .malformedHeader("an X25519 stanza's share is a low-order point")
            }
            let wrapKey = try AgeCrypto.hkdf(shared, salt: share + recipient.publicKey, info: X25519Recipient.label)
            let nonce = [UInt8](repeating: 0, count: ChaChaPoly.nonceLength)
            guard var fileKey = try ChaChaPoly.open(key: wrapKey, nonce: nonce, stanza.body) else { continue }
            defer { SecretBytes.wipe(&fileKey) }
            return SecretBytes(fileKey)
        }
        return nil
    }
}
