/// age v1 files (C2SP age, `age-encryption.org/v1`), whole in memory: encrypting to X25519
/// recipients or a passphrase, decrypting with identities.
///
/// A file key of 16 random bytes is wrapped in one stanza per recipient; the header carries an
/// HMAC under a key derived from it; the payload is STREAM-encrypted under
/// HKDF-SHA-256(ikm: file key, salt: 16-byte nonce, info: "payload").
package enum AgeFile {
    /// `plaintext` encrypted to `recipients` (at least one), armored when asked.
    package static func encrypt(_ plaintext: some Collection<UInt8>, to recipients: [X25519Recipient], armored: Bool = false)
        throws(AgeError)
        -> [UInt8]
    {
        guard !recipients.isEmpty else { throw .malformedKey("no recipient to encrypt to") }
        let fileKey = try AgeCrypto.randomSecret(16)
        var stanzas: [AgeStanza] = []
        for recipient in recipients { stanzas.append(try recipient.wrap(fileKey)) }
        return try seal(plaintext, stanzas: stanzas, fileKey: fileKey, armored: armored)
    }

    /// `plaintext` encrypted under `passphrase` (one scrypt stanza, alone), armored when asked.
    package static func encrypt(
        _ plaintext: some Collection<UInt8>, passphrase: AgePassphrase, workFactor: Int = AgePassphrase.defaultWorkFactor,
        armored: Bool = false
    ) throws(AgeError) -> [UInt8] {
        let fileKey = try AgeCrypto.randomSecret(16)
        return try seal(plaintext, stanzas: [try passphrase.wrap(fileKey, workFactor: workFactor)], fileKey: fileKey, armored: armored)
    }

    /// The plaintext of `bytes` (binary or armored age file), opened with the first of
    /// `identities` that matches a stanza.
    package static func decrypt(_ bytes: [UInt8], with identities: [AgeIdentity]) throws(AgeError) -> [UInt8] {
        let file = AgeArmor.isArmored(bytes) ? try AgeArmor.decode(bytes) : bytes
        let header = try AgeHeader.parse(file)
        // C2SP age, "scrypt recipient type": an scrypt stanza must be alone in its header.
        if header.stanzas.count > 1, header.stanzas.contains(where: { $0.type == "scrypt" }) {
            throw .malformedHeader("an scrypt stanza must be the only one")
        }
        let fileKey = try unwrap(header.stanzas, identities)
        let expected = try AgeHeader.mac(of: header.authenticated, fileKey: fileKey)
        guard AgeCrypto.constantTimeEqual(expected, header.mac) else { throw .headerMACMismatch }
        // The nonce is read before the payload; its absence is a damaged header to age.
        guard file.count - header.payloadStart >= 16 else { throw .malformedHeader("the file ends before the payload nonce") }
        let nonce = Array(file[header.payloadStart..<(header.payloadStart + 16)])
        let payloadKey = try AgeCrypto.hkdf(fileKey, salt: nonce, info: "payload")
        return try AgeStream.decrypt(key: payloadKey, file[(header.payloadStart + 16)...])
    }

    private static func unwrap(_ stanzas: [AgeStanza], _ identities: [AgeIdentity]) throws(AgeError) -> SecretBytes {
        var wrongPassphrase = false
        for identity in identities {
            switch identity {
            case .x25519(let identity):
                if let fileKey = try identity.unwrap(stanzas) { return fileKey }
            case .passphrase(let passphrase):
                do {
                    if let fileKey = try passphrase.unwrap(stanzas) { return fileKey }
                } catch AgeError.wrongPassphrase {
                    // Another passphrase given may open it (age tries them all).
                    wrongPassphrase = true
                }
            }
        }
        throw wrongPassphrase ? .wrongPassphrase : .noIdentityMatches
    }

    private static func seal(_ plaintext: some Collection<UInt8>, stanzas: [AgeStanza], fileKey: SecretBytes, armored: Bool)
        throws(AgeError) -> [UInt8]
    {
        let header = try AgeHeader.encode(stanzas, fileKey: fileKey)
        let nonce = try AgeCrypto.randomBytes(16)
        let payloadKey = try AgeCrypto.hkdf(fileKey, salt: nonce, info: "payload")
        let file = header + nonce + (try AgeStream.encrypt(key: payloadKey, plaintext))
        return armored ? AgeArmor.encode(file) : file
    }
}
