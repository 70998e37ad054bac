/// What a token and its times must look like wherever authkit holds or passes one.
package enum TokenText {
    /// RFC 6750 §2.1's `b64token` and what providers really send: visible ASCII only, so a
    /// token can never end a header line or a protocol line early.
    package static func isTransportable(_ token: String) -> Bool {
        token.utf8.allSatisfy { $0 >= 0x21 && $0 <= 0x7E }
    }

    /// The latest time (Unix seconds, the year 5138) a stored or served token may name: anything
    /// later (or negative) was not written by authkit, and would overflow the date arithmetic of
    /// every reader.
    package static let latestTime: Double = 1e11

    /// RFC 8707 §2: an absolute URI without a fragment, printable, bounded.
    package static func isResource(_ text: String) -> Bool {
        guard text.utf8.count <= 2048, text.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }), !text.utf8.contains(UInt8(ascii: "#")),
            let colon = text.utf8.firstIndex(of: UInt8(ascii: ":")), colon != text.utf8.startIndex
        else { return false }
        return text.utf8[..<colon].allSatisfy { byte in
            (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte) || byte == UInt8(ascii: "+")
                || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".")
        }
    }
}
