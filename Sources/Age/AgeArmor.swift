/// age's ASCII armor (C2SP age, "ASCII armor"): the file in padded standard base64, 64 columns
/// a line, between `-----BEGIN AGE ENCRYPTED FILE-----` and `-----END AGE ENCRYPTED FILE-----`.
///
/// Reading is as strict as age's: every line but the last full, the last shorter (or full),
/// canonical base64 with its padding, no empty line, no whitespace inside; LF or CRLF line
/// ends; up to 1024 bytes of whitespace before the armor and after it, nothing else.
package enum AgeArmor {
    package static let header = Array("-----BEGIN AGE ENCRYPTED FILE-----".utf8)
    package static let footer = Array("-----END AGE ENCRYPTED FILE-----".utf8)
    package static let maximumWhitespace = 1024

    /// `bytes` armored, each line ending with LF.
    package static func encode(_ bytes: [UInt8]) -> [UInt8] {
        var output = header + [0x0A]
        let text = Array(AgeBase64.encode(bytes, padded: true).utf8)
        var start = 0
        while start < text.count {
            let end = min(start + AgeStanza.columnsPerLine, text.count)
            output += text[start..<end] + [0x0A]
            start = end
        }
        return output + footer + [0x0A]
    }

    /// Whether `bytes` begin (after whitespace) with the armor's first line, as age decides.
    package static func isArmored(_ bytes: [UInt8]) -> Bool {
        let start = bytes.prefix(maximumWhitespace + header.count).drop(while: isWhitespace)
        return start.starts(with: header)
    }

    /// The armored file's bytes.
    package static func decode(_ bytes: [UInt8]) throws(AgeError) -> [UInt8] {
        var position = 0
        func line() throws(AgeError) -> ArraySlice<UInt8> {
            guard position < bytes.count else { throw .malformedArmor("the armor ends early, without its last line") }
            let end = bytes[position...].firstIndex(of: 0x0A) ?? bytes.count
            var line = bytes[position..<end]
            position = min(end + 1, bytes.count)
            if line.last == 0x0D { line = line.dropLast() }
            return line
        }
        var skipped = 0
        while true {
            let first = try line()
            if first.allSatisfy(isWhitespace) {
                skipped += first.count + 1
                guard skipped <= maximumWhitespace else { throw .malformedArmor("too much whitespace before the armor") }
                continue
            }
            guard first.elementsEqual(header) else {
                throw .malformedArmor("the first line is not \(String(decoding: header, as: UTF8.self))")
            }
            break
        }
        var output: [UInt8] = []
        while true {
            let text = try line()
            if text.elementsEqual(footer) { break }
            guard !text.isEmpty else { throw .malformedArmor("an empty line inside the armor") }
            guard text.count <= AgeStanza.columnsPerLine else { throw .malformedArmor("a line is longer than 64 columns") }
            guard let decoded = AgeBase64.decodePadded(text) else { throw .malformedArmor("a line is not canonical base64") }
            output += decoded
            if decoded.count < AgeStanza.bytesPerLine {
                guard try line().elementsEqual(footer) else { throw .malformedArmor("a short line is not followed by the last line") }
                break
            }
        }
        let rest = bytes[position...].prefix(maximumWhitespace)
        guard rest.allSatisfy(isWhitespace) else { throw .malformedArmor("data follows the armor") }
        guard rest.count < maximumWhitespace else { throw .malformedArmor("too much whitespace after the armor") }
        return output
    }

    private static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || (0x09...0x0D).contains(byte)
    }
}
