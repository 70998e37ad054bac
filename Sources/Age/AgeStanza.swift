/// A recipient stanza of an age header (C2SP age, "Header"): `-> TYPE ARG…`, then the body
/// in canonical unpadded base64, 64 columns a line, ending with a line shorter than 64
/// columns (possibly empty).
package struct AgeStanza: Sendable, Equatable {
    /// Columns of a full body line, and the bytes it holds.
    package static let columnsPerLine = 64
    package static let bytesPerLine = 48

    package var type: String
    package var arguments: [String]
    package var body: [UInt8]

    /// The stanza as it appears in a header, final line feed included.
    package var encoded: [UInt8] {
        var output = Array("-> ".utf8) + Array(([type] + arguments).joined(separator: " ").utf8) + [0x0A]
        let text = Array(AgeBase64.encode(body).utf8)
        var start = 0
        while start < text.count {
            let end = min(start + Self.columnsPerLine, text.count)
            output += text[start..<end] + [0x0A]
            start = end
        }
        // The body always ends with a short line: an empty one after a full line (or no body).
        if text.count % Self.columnsPerLine == 0 { output.append(0x0A) }
        return output
    }

    /// An argument or stanza type: one or more VCHARs (C2SP age, "Header": "arbitrary
    /// strings … of ASCII characters in the range 33 to 126").
    package static func isValidArgument(_ text: some Collection<UInt8>) -> Bool {
        !text.isEmpty && text.allSatisfy { $0 >= 33 && $0 <= 126 }
    }
}
