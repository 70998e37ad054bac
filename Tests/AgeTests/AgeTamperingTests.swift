@testable import Age
import Testing

/// age files that were changed refuse to open with a typed error and never give plaintext: a
/// byte flipped anywhere in the header or payload, the file cut at any length, data appended,
/// a header put on another file's payload, a file for another identity; and no error's text
/// holds the plaintext or a key.
@Suite struct AgeTamperingTests {
    static let secret = Array("{\"refresh_token\":\"rt-very-secret\"}".utf8)
    let identity: X25519Identity
    let sealed: [UInt8]

    init() throws {
        identity = try X25519Identity.generate()
        sealed = try AgeFile.encrypt(Self.secret, to: [identity.recipient])
    }

    func refuses(_ bytes: [UInt8], _ what: String) {
        do {
            let opened = try AgeFile.decrypt(bytes, with: [.x25519(identity)])
            Issue.record("\(what): opened \(opened.count) bytes")
        } catch {
            let text = error.description
            #expect(!text.contains("rt-very-secret"), "\(what)")
            #expect(!text.contains(identity.secretKey) && !text.contains("AGE-SECRET-KEY"), "\(what)")
        }
    }

    @Test func roundTripsAtChunkBoundaries() throws {
        for size in [0, 1, AgeStream.chunkSize - 1, AgeStream.chunkSize, AgeStream.chunkSize + 1, 2 * AgeStream.chunkSize] {
            let input = (0..<size).map { UInt8(truncatingIfNeeded: $0) }
            for armored in [false, true] {
                let file = try AgeFile.encrypt(input, to: [identity.recipient], armored: armored)
                #expect(try AgeFile.decrypt(file, with: [.x25519(identity)]) == input, "size \(size), armored \(armored)")
            }
        }
    }

    @Test func everyFlippedByteIsRefused() {
        for index in sealed.indices {
            for mask: UInt8 in [0x01, 0x80] {
                var bytes = sealed
                bytes[index] ^= mask
                refuses(bytes, "byte \(index) ^ \(mask)")
            }
        }
    }

    @Test func everyTruncationAndAnyAppendedDataIsRefused() {
        for length in 0..<sealed.count { refuses(Array(sealed.prefix(length)), "cut at \(length)") }
        refuses(sealed + [0], "one byte appended")
        refuses(sealed + sealed, "the file twice")
    }

    @Test func aHeaderOnAnotherFilesPayloadIsRefused() throws {
        let other = try AgeFile.encrypt(Array("another group's token".utf8), to: [identity.recipient])
        let header = try AgeHeader.parse(sealed), otherHeader = try AgeHeader.parse(other)
        refuses(Array(sealed[..<header.payloadStart] + other[otherHeader.payloadStart...]), "header of one, payload of another")
        #expect(throws: AgeError.damagedPayload("a payload chunk does not authenticate")) {
            try AgeFile.decrypt(Array(sealed[..<header.payloadStart] + other[otherHeader.payloadStart...]), with: [.x25519(identity)])
        }
    }

    @Test func aFileForAnotherIdentityIsNoMatch() throws {
        let stranger = try X25519Identity.generate()
        let theirs = try AgeFile.encrypt(Self.secret, to: [stranger.recipient])
        #expect(throws: AgeError.noIdentityMatches) { try AgeFile.decrypt(theirs, with: [.x25519(identity)]) }
        #expect(throws: AgeError.noIdentityMatches) { try AgeFile.decrypt(sealed, with: []) }
    }

    @Test func aChangedMACLineIsAHeaderMismatch() throws {
        let header = try AgeHeader.parse(sealed)
        var mac = header.mac
        mac[0] ^= 1
        let line = Array(" \(AgeBase64.encode(mac))\n".utf8)
        let forged = Array(header.authenticated) + line + sealed[header.payloadStart...]
        #expect(throws: AgeError.headerMACMismatch) { try AgeFile.decrypt(forged, with: [.x25519(identity)]) }
    }

    @Test func theErrorsSayWhatHappened() {
        #expect(AgeError.wrongPassphrase.description == "wrong passphrase")
        #expect(AgeError.notAgeFile.description.hasPrefix("not an age file"))
        #expect(AgeError.headerMACMismatch.description.contains("tampered"))
        #expect(AgeError.noIdentityMatches.description.contains("no identity"))
    }
}
