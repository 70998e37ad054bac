/// Strict base64url (RFC 4648 §5) without padding, as JOSE uses it (RFC 7515 §2).
///
/// Decoding refuses padding, whitespace, characters outside `A-Z a-z 0-9 - _`, a length that
/// leaves one stray character, and non-zero unused bits in the last character: every byte
/// string has exactly one accepted encoding, so a token cannot be altered without changing
/// the signed bytes.
public enum Base64URL {
    /// Decodes strict base64url text.
    public static func decode(_ text: some StringProtocol) throws(JOSEError) -> [UInt8] {
        try decode(bytes: text.utf8)
    }

    /// Decodes strict base64url given as ASCII bytes.
    public static func decode(bytes: some Collection<UInt8>) throws(JOSEError) -> [UInt8] {
        guard let decoded = withContiguousBytes(bytes, { decode(buffer: $0) }) else { throw .invalidBase64URL }
        return decoded
    }

    /// Encodes bytes as base64url without padding.
    public static func encode(_ bytes: some Collection<UInt8>) -> String {
        withContiguousBytes(bytes) { input in
            let fullGroups = input.count / 3
            let remainder = input.count % 3
            let outputLength = fullGroups * 4 + (remainder == 0 ? 0 : remainder + 1)
            return String(unsafeUninitializedCapacity: outputLength) { output in
                alphabet.withUnsafeBufferPointer { alphabet in
                    var written = 0
                    var offset = 0
                    for _ in 0..<fullGroups {
                        let value = UInt32(input[offset]) << 16 | UInt32(input[offset + 1]) << 8 | UInt32(input[offset + 2])
                        output[written] = alphabet[Int(value >> 18 & 63)]
                        output[written + 1] = alphabet[Int(value >> 12 & 63)]
                        output[written + 2] = alphabet[Int(value >> 6 & 63)]
                        output[written + 3] = alphabet[Int(value & 63)]
                        written += 4
                        offset += 3
                    }
                    if remainder == 1 {
                        let value = UInt32(input[offset]) << 16
                        output[written] = alphabet[Int(value >> 18 & 63)]
                        output[written + 1] = alphabet[Int(value >> 12 & 63)]
                        written += 2
                    } else if remainder == 2 {
                        let value = UInt32(input[offset]) << 16 | UInt32(input[offset + 1]) << 8
                        output[written] = alphabet[Int(value >> 18 & 63)]
                        output[written + 1] = alphabet[Int(value >> 12 & 63)]
                        output[written + 2] = alphabet[Int(value >> 6 & 63)]
                        written += 3
                    }
                    return written
                }
            }
        }
    }

    private static let alphabet: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// Each byte's 6-bit value, or 0xFF for bytes outside the alphabet.
    private static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (value, character) in alphabet.enumerated() { table[Int(character)] = UInt8(value) }
        return table
    }()

    /// The number of bytes `count` characters of base64url decode to, or `nil` for a length no
    /// encoding has (one character left over).
    @inline(__always)
    static func decodedLength(ofEncodedLength count: Int) -> Int? {
        switch count % 4 {
        case 0: return count / 4 * 3
        case 2: return count / 4 * 3 + 1
        case 3: return count / 4 * 3 + 2
        default: return nil
        }
    }

    /// Decodes `input`; `nil` when it is not strict base64url.
    static func decode(buffer input: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        guard let outputLength = decodedLength(ofEncodedLength: input.count) else { return nil }
        var valid = true
        let output = [UInt8](unsafeUninitializedCapacity: outputLength) { output, initialized in
            valid = decode(input, into: UnsafeMutableBufferPointer(rebasing: output[0..<outputLength]))
            initialized = valid ? outputLength : 0
        }
        return valid ? output : nil
    }

    /// Decodes `input` into `output`, which holds exactly its decoded length; false when the
    /// input is not strict base64url (output is then garbage).
    static func decode(_ input: UnsafeBufferPointer<UInt8>, into output: UnsafeMutableBufferPointer<UInt8>) -> Bool {
        values.withUnsafeBufferPointer { table in
            // OR of every looked-up value: any 0xFF (not in the alphabet) sets bit 7. Checking
            // once at the end keeps the loops free of branches.
            var invalid: UInt8 = 0
            var inOffset = 0
            var outOffset = 0
            let fullGroups = input.count / 4
            for _ in 0..<fullGroups {
                let a = table[Int(input[inOffset])], b = table[Int(input[inOffset + 1])]
                let c = table[Int(input[inOffset + 2])], d = table[Int(input[inOffset + 3])]
                invalid |= a | b | c | d
                let value = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6 | UInt32(d)
                output[outOffset] = UInt8(truncatingIfNeeded: value >> 16)
                output[outOffset + 1] = UInt8(truncatingIfNeeded: value >> 8)
                output[outOffset + 2] = UInt8(truncatingIfNeeded: value)
                inOffset += 4
                outOffset += 3
            }
            switch input.count - inOffset {
            case 2:
                let a = table[Int(input[inOffset])], b = table[Int(input[inOffset + 1])]
                invalid |= a | b
                // The last character carries 4 unused bits; they must be zero.
                if b & 0x0F != 0 { invalid |= 0x80 }
                output[outOffset] = UInt8(truncatingIfNeeded: UInt32(a) << 2 | UInt32(b) >> 4)
            case 3:
                let a = table[Int(input[inOffset])], b = table[Int(input[inOffset + 1])]
                let c = table[Int(input[inOffset + 2])]
                invalid |= a | b | c
                // The last character carries 2 unused bits; they must be zero.
                if c & 0x03 != 0 { invalid |= 0x80 }
                let value = UInt32(a) << 12 | UInt32(b) << 6 | UInt32(c)
                output[outOffset] = UInt8(truncatingIfNeeded: value >> 10)
                output[outOffset + 1] = UInt8(truncatingIfNeeded: value >> 2)
            default:
                break
            }
            return invalid & 0x80 == 0
        }
    }
}

/// Calls `body` with the collection's bytes in contiguous memory, copying only when needed.
@inline(__always)
func withContiguousBytes<Bytes: Collection<UInt8>, Result>(
    _ bytes: Bytes, _ body: (UnsafeBufferPointer<UInt8>) -> Result
) -> Result {
    if let result = bytes.withContiguousStorageIfAvailable(body) { return result }
    return Array(bytes).withUnsafeBufferPointer(body)
}
