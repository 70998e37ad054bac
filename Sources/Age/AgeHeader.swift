/// The header of an age file (C2SP age, "Header"): the version line, the recipient stanzas,
/// and the MAC line `--- ` + base64(HMAC-SHA-256) over everything before its space.
///
/// Parsing is strict, as the specification and age's reference implementation are: lines end
/// with LF alone, arguments are VCHARs separated by one space, base64 is canonical and
/// unpadded, a body line holds at most 48 bytes and the last one fewer. Two bounds keep a
/// hostile file from costing much: the header's size and the number of stanzas.
package struct AgeHeader: Sendable {
    package static let versionLine = Array("age-encryption.org/v1".utf8)
    package static let maximumBytes = 1 << 20
    package static let maximumStanzas = 1024

    package var stanzas: [AgeStanza]
    package var mac: [UInt8]
    /// The header's bytes up to and including `---`: what the MAC covers.
    package var authenticated: ArraySlice<UInt8>
    /// Where the payload (its nonce first) starts in the input.
    package var payloadStart: Int

    /// The header of `stanzas` with its MAC under `fileKey` (C2SP age, "Header MAC").
    package static func encode(_ stanzas: [AgeStanza], fileKey: SecretBytes) throws(AgeError) -> [UInt8] {
        var header = versionLine + [0x0A]
        for stanza in stanzas { header += stanza.encoded }
        header += Array("---".utf8)
        let mac = try Self.mac(of: header[...], fileKey: fileKey)
        return header + Array(" \(AgeBase64.encode(mac))\n".utf8)
    }

    /// HMAC-SHA-256 under HKDF-SHA-256(ikm: file key, salt: empty, info: "header").
    package static func mac(of authenticated: ArraySlice<UInt8>, fileKey: SecretBytes) throws(AgeError) -> [UInt8] {
        let key = try AgeCrypto.hkdf(fileKey, salt: [], info: "header")
        return try AgeCrypto.hmacSHA256(key: key, authenticated)
    }

    /// Parses the header at the start of `bytes`.
    package static func parse(_ bytes: [UInt8]) throws(AgeError) -> AgeHeader {
        var reader = LineReader(bytes: bytes)
        guard let version = reader.next() else {
            if bytes.starts(with: versionLine) { throw .malformedHeader("the header ends after its version line") }
            throw bytes.starts(with: Array("age-encryption.org/".utf8)) ? .unsupportedVersion : .notAgeFile
        }
        guard version.elementsEqual(versionLine) else {
            throw version.starts(with: Array("age-encryption.org/".utf8)) ? .unsupportedVersion : .notAgeFile
        }
        var stanzas: [AgeStanza] = []
        while true {
            let lineStart = reader.position
            guard let line = reader.next() else { throw reader.failure("the header ends before its MAC line") }
            if line.starts(with: Array("---".utf8)) {
                let fields = line.split(separator: 0x20, omittingEmptySubsequences: false)
                guard fields.count == 2, fields[0].elementsEqual("---".utf8) else { throw .malformedHeader("malformed MAC line") }
                guard let mac = AgeBase64.decodeUnpadded(fields[1]), mac.count == 32 else { throw .malformedHeader("malformed MAC") }
                return AgeHeader(stanzas: stanzas, mac: mac, authenticated: bytes[..<(lineStart + 3)], payloadStart: reader.position)
            }
            guard line.starts(with: Array("->".utf8)) else { throw .malformedHeader("a line is neither a stanza nor the MAC line") }
            guard stanzas.count < maximumStanzas else { throw .malformedHeader("more than \(maximumStanzas) recipient stanzas") }
            stanzas.append(try stanza(opening: line, reader: &reader))
        }
    }

    private static func stanza(opening line: ArraySlice<UInt8>, reader: inout LineReader) throws(AgeError) -> AgeStanza {
        let fields = line.split(separator: 0x20, omittingEmptySubsequences: false)
        guard fields.count >= 2, fields[0].elementsEqual("->".utf8) else { throw .malformedHeader("malformed stanza line") }
        guard fields.dropFirst().allSatisfy(AgeStanza.isValidArgument) else {
            throw .malformedHeader("a stanza argument is empty or has a character outside ASCII 33–126")
        }
        let strings = fields.dropFirst().map { String(decoding: $0, as: UTF8.self) }
        var body: [UInt8] = []
        while true {
            guard let line = reader.next() else { throw reader.failure("the header ends inside a stanza") }
            guard let decoded = AgeBase64.decodeUnpadded(line) else {
                if line.starts(with: Array("---".utf8)) || line.starts(with: Array("->".utf8)) {
                    throw .malformedHeader("a stanza ends without a short final body line")
                }
                throw .malformedHeader("a stanza body line is not canonical unpadded base64")
            }
            guard decoded.count <= AgeStanza.bytesPerLine else { throw .malformedHeader("a stanza body line is longer than 64 columns") }
            body += decoded
            if decoded.count < AgeStanza.bytesPerLine {
                return AgeStanza(type: strings[0], arguments: Array(strings.dropFirst()), body: body)
            }
        }
    }

    /// Lines ending in LF, within ``maximumBytes``.
    private struct LineReader {
        let bytes: [UInt8]
        var position = 0
        var tooLong = false

        init(bytes: [UInt8]) { self.bytes = bytes }

        /// The next line without its LF; `nil` at the end of the input, when a line has no LF,
        /// or past the size bound.
        mutating func next() -> ArraySlice<UInt8>? {
            let limit = min(bytes.count, AgeHeader.maximumBytes)
            guard position < limit, let end = bytes[position..<limit].firstIndex(of: 0x0A) else {
                tooLong = bytes.count > AgeHeader.maximumBytes
                return nil
            }
            defer { position = end + 1 }
            return bytes[position..<end]
        }

        func failure(_ reason: String) -> AgeError {
            .malformedHeader(tooLong ? "the header is larger than \(AgeHeader.maximumBytes) bytes" : reason)
        }
    }
}
