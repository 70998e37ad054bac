@testable import Age
import Testing

/// age keys and identity files are read strictly, Bech32 (BIP-173 as age uses it) in case,
/// checksum and padding; `age1…` recipients lower case only, `AGE-SECRET-KEY-1…` identities upper case only;
/// identity files as age-keygen writes them, sealed with a passphrase (a wrong one is its own
/// error, work factors above age's limit are refused before any work); no error repeats a key.
@Suite struct AgeKeyTests {
    /// The identity of the CCTV vectors, and its recipient as `age-keygen -y` prints it.
    static let identity = "AGE-SECRET-KEY-1EGTZVFFV20835NWYV6270LXYVK2VKNX2MMDKWYKLMGR48UAWX40Q2P2LM0"

    @Test func bech32RoundTripsAndIsStrict() throws {
        let data: [UInt8] = (0..<32).map { UInt8($0 * 7 % 256) }
        let text = Bech32.encode(hrp: "age", data: data)
        #expect(try Bech32.decode(text).data == data)
        #expect(try Bech32.decode(text.uppercased()).data == data)
        #expect(throws: AgeError.self) { try Bech32.decode(text.prefix(10).uppercased() + text.dropFirst(10)) }  // mixed case
        var broken = Array(text.utf8)
        broken[broken.count - 1] = broken[broken.count - 1] == UInt8(ascii: "q") ? UInt8(ascii: "p") : UInt8(ascii: "q")
        #expect(throws: AgeError.malformedKey("invalid Bech32 checksum")) { try Bech32.decode(String(decoding: broken, as: UTF8.self)) }
        #expect(throws: AgeError.self) { try Bech32.decode("age1") }
        #expect(throws: AgeError.self) { try Bech32.decode("age1bqqqqqq") }  // 'b' is not in the alphabet
    }

    @Test func recipientsAndIdentitiesHaveOneCase() throws {
        let identity = try X25519Identity(secretKey: Self.identity)
        #expect(identity.secretKey == Self.identity)
        let recipient = identity.recipient.description
        #expect(recipient.hasPrefix("age1"))
        #expect(try X25519Recipient(recipient) == identity.recipient)
        #expect(throws: AgeError.self) { try X25519Recipient(recipient.uppercased()) }
        #expect(throws: AgeError.self) { try X25519Identity(secretKey: Self.identity.lowercased()) }
        #expect(throws: AgeError.self) { try X25519Recipient(Self.identity) }
        #expect(throws: AgeError.self) { try X25519Identity(secretKey: recipient) }
        #expect(!identity.description.contains("SECRET"))
    }

    @Test func identityFilesAsAgeKeygenWritesThem() throws {
        let identity = try X25519Identity.generate()
        let text = try AgeIdentityFile.text(for: identity, created: 0).withUnsafeBytes { Array($0) }
        #expect(String(decoding: text, as: UTF8.self).hasPrefix("# created: 1970-01-01T00:00:00Z\n# public key: age1"))
        #expect(try AgeIdentityFile.parse(text).map(\.secretKey) == [identity.secretKey])
        let crlf = Array("# a comment\r\n\r\n\(Self.identity)\r\n".utf8)
        #expect(try AgeIdentityFile.parse(crlf).count == 1)
    }

    @Test func malformedIdentityFilesNameTheLineNotTheKey() {
        let damaged = String(Self.identity.dropLast()) + "Q"
        #expect(throws: AgeError.malformedIdentityFile(line: 2, reason: "not an AGE-SECRET-KEY-1 identity (damaged, or of another kind)")) {
            try AgeIdentityFile.parse(Array("# key\n\(damaged)\n".utf8))
        }
        #expect(throws: AgeError.malformedIdentityFile(line: 1, reason: "a recipient (public key) where an identity belongs")) {
            try AgeIdentityFile.parse(Array("age1qqqq\n".utf8))
        }
        #expect(throws: AgeError.self) { try AgeIdentityFile.parse(Array("# nothing\n".utf8)) }
        do {
            _ = try AgeIdentityFile.parse(Array("\(damaged)\n".utf8))
        } catch {
            #expect(!error.description.contains(damaged))
        }
    }

    @Test func sealedIdentityFilesOpenWithTheirPassphraseOnly() throws {
        let identity = try X25519Identity.generate()
        let sealed = try AgeIdentityFile.seal(identity, passphrase: try AgePassphrase("hunter2"), workFactor: 10)
        #expect(AgeIdentityFile.isSealed(sealed))
        #expect(sealed.starts(with: AgeArmor.header))
        #expect(try AgeIdentityFile.open(sealed, passphrase: try AgePassphrase("hunter2")).map(\.secretKey) == [identity.secretKey])
        #expect(throws: AgeError.wrongPassphrase) { try AgeIdentityFile.open(sealed, passphrase: try AgePassphrase("hunter3")) }
        #expect(throws: AgeError.unusablePassphrase("it is empty")) { try AgePassphrase("") }
        let read = try AgeIdentityFile.read(sealed) { () throws(AgeError) in try AgePassphrase("hunter2") }
        #expect(read.map(\.secretKey) == [identity.secretKey])
    }

    @Test func newFilesUseAgesWorkFactorAndReadingIsBounded() throws {
        let fileKey = try AgeCrypto.randomSecret(16)
        let passphrase = try AgePassphrase("pw")
        #expect(AgePassphrase.defaultWorkFactor == 18)
        // A stanza asking for 2^23 is refused before scrypt runs (age's limit is 2^22).
        var stanza = try passphrase.wrap(fileKey, workFactor: 1)
        stanza.arguments[1] = "23"
        #expect(throws: AgeError.workFactorTooLarge(log2N: 23, limit: 22)) { try passphrase.unwrap([stanza]) }
        for text in ["018", "+18", "0x12", "18 ", "", "99999999999999999999"] {
            stanza.arguments[1] = text
            #expect(throws: AgeError.self, "\(text)") { try passphrase.unwrap([stanza]) }
        }
    }
}
