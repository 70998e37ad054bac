/// Base64 with the standard alphabet (RFC 4648 §4), as age writes it: unpadded and canonical in
/// the header (C2SP age, "Conventions": "canonical base64 … without padding"), padded in the
/// armor. Decoding is strict: no padding where none belongs, no whitespace or line breaks,
/// no non-zero unused bits (a non-canonical encoding would make the header malleable).
package enum AgeBase64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    private static let values: [Int8] = {
        var table = [Int8](repeating: -1, count: 256)
        for (index, character) in alphabet.enumerated() { table[Int(character)] = Int8(index) }
        return table
    }()

    /// Encodes `bytes`, with `=` padding when `padded`.
    package static func encode(_ bytes: some Collection<UInt8>, padded: Bool = false) -> String {
        let input = Array(bytes)
        var output: [UInt8] = []
        output.reserveCapacity((input.count + 2) / 3 * 4)
        var index = 0
        while index < input.count {
            let remaining = input.count - index
            let b0 = UInt32(input[index])
            let b1 = remaining > 1 ? UInt32(input[index + 1]) : 0
            let b2 = remaining > 2 ? UInt32(input[index + 2]) : 0
            let group = b0 << 16 | b1 << 8 | b2
            output.append(alphabet[Int(group >> 18 & 63)])
            output.append(alphabet[Int(group >> 12 & 63)])
            if remaining > 1 { output.append(alphabet[Int(group >> 6 & 63)]) } else if padded { output.append(UInt8(ascii: "=")) }
            if remaining > 2 { output.append(alphabet[Int(group & 63)]) } else if padded { output.append(UInt8(ascii: "=")) }
            index += 3
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// Decodes canonical unpadded base64; `nil` for anything else.
    package static func decodeUnpadded(_ text: some Collection<UInt8>) -> [UInt8]? {
        decode(Array(text))
    }

    /// Decodes canonical padded base64 (length a multiple of 4, `=` only at the end); `nil`
    /// for anything else.
    package static func decodePadded(_ text: some Collection<UInt8>) -> [UInt8]? {
        var characters = Array(text)
        guard characters.count % 4 == 0 else { return nil }
        var padding = 0
        while padding < 2, characters.last == UInt8(ascii: "=") {
            characters.removeLast()
            padding += 1
        }
        // A third `=`, or padding that a shorter unpadded length would not need, is refused by
        // `decode` (a `=` is not in the alphabet) or by the length check here.
        guard padding == 0 || characters.count % 4 == 4 - padding else { return nil }
        return decode(characters)
    }

    private static func decode(_ characters: [UInt8]) -> [UInt8]? {
        guard characters.count % 4 != 1 else { return nil }
        var output: [UInt8] = []
        output.reserveCapacity(characters.count * 3 / 4)
        var accumulator: UInt32 = 0
        var bits = 0
        for character in characters {
            let value = values[Int(character)]
            guard value >= 0 else { return nil }
            accumulator = accumulator << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                output.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
                accumulator &= (1 << UInt32(bits)) - 1
            }
        }
        // Canonical: the bits left over from the last character are zero.
        guard accumulator == 0 else { return nil }
        return output
    }
}
