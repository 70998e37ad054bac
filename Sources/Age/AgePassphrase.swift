/// A passphrase, as age's scrypt recipient type uses it (C2SP age, "scrypt recipient type"):
/// the stanza is `-> scrypt SALT LOG2N`, the wrap key scrypt(passphrase, "age-encryption.org/v1/scrypt"
/// ‖ SALT, N = 2^LOG2N, r = 8, p = 1), and the stanza must be the only one of its file.
package struct AgePassphrase: Sendable, CustomStringConvertible {
    /// age's work factor for new files (`age -p`): about a second on a modern machine.
    package static let defaultWorkFactor = 18
    /// The largest work factor read, age's own limit (about 15 s and 4 GiB): a hostile file
    /// must not make opening take minutes.
    package static let maximumWorkFactor = 22
    package static let label = Array("age-encryption.org/v1/scrypt".utf8)

    package let secret: SecretBytes

    /// A passphrase; it cannot be empty.
    package init(_ text: String) throws(AgeError) {
        guard !text.isEmpty else { throw .unusablePassphrase("it is empty") }
        secret = SecretBytes(text.utf8)
    }

    package init(bytes: SecretBytes) throws(AgeError) {
        guard bytes.count > 0 else { throw .unusablePassphrase("it is empty") }
        secret = bytes
    }

    package var description: String { "passphrase" }

    /// The scrypt stanza wrapping `fileKey` under this passphrase with a fresh 16-byte salt.
    package func wrap(_ fileKey: SecretBytes, workFactor: Int = defaultWorkFactor) throws(AgeError) -> AgeStanza {
        let salt = try AgeCrypto.randomBytes(16)
        let wrapKey = try Scrypt.derive(secret, salt: Self.label + salt, log2N: workFactor)
        let body = try fileKey.withUnsafeBytes { (key) throws(AgeError) in
            try ChaChaPoly.seal(key: wrapKey, nonce: [UInt8](repeating: 0, count: ChaChaPoly.nonceLength), key)
        }
        return AgeStanza(type: "scrypt", arguments: [AgeBase64.encode(salt), String(workFactor)], body: body)
    }

    /// The file key from the file's scrypt stanza; `nil` when there is none (a file for
    /// X25519 identities). Throws ``AgeError/wrongPassphrase`` when the passphrase does not
    /// open it, and refuses work factors above ``maximumWorkFactor``.
    package func unwrap(_ stanzas: [AgeStanza]) throws(AgeError) -> SecretBytes? {
        guard let stanza = stanzas.first(where: { $0.type == "scrypt" }) else { return nil }
        guard stanzas.count == 1 else { throw .malformedHeader("an scrypt stanza must be the only one") }
        guard stanza.arguments.count == 2 else { throw .malformedHeader("an scrypt stanza has two arguments") }
        guard let salt = AgeBase64.decodeUnpadded(stanza.arguments[0].utf8), salt.count == 16 else {
            throw .malformedHeader("an scrypt stanza's salt is not 16 bytes in canonical base64")
        }
        let workFactor = try Self.workFactor(stanza.arguments[1])
        guard stanza.body.count == 16 + ChaChaPoly.tagLength else {
            throw .malformedHeader("an scrypt stanza does not wrap a 16-byte file key")
        }
        let wrapKey = try Scrypt.derive(secret, salt: Self.label + salt, log2N: workFactor)
        let nonce = [UInt8](repeating: 0, count: ChaChaPoly.nonceLength)
        guard var fileKey = try ChaChaPoly.open(key: wrapKey, nonce: nonce, stanza.body) else { throw .wrongPassphrase }
        defer { SecretBytes.wipe(&fileKey) }
        return SecretBytes(fileKey)
    }

    /// LOG2N: a decimal without sign or leading zero (C2SP age, "scrypt recipient type"),
    /// from 1 to ``maximumWorkFactor``.
    private static func workFactor(_ text: String) throws(AgeError) -> Int {
        let digits = Array(text.utf8)
        guard let first = digits.first, first != UInt8(ascii: "0"), digits.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
            throw .malformedHeader("an scrypt stanza's work factor is not a decimal number")
        }
        guard digits.count <= 4, let value = Int(text) else { throw .malformedHeader("an scrypt stanza's work factor is out of range") }
        guard value <= maximumWorkFactor else { throw .workFactorTooLarge(log2N: value, limit: maximumWorkFactor) }
        return value
    }
}
