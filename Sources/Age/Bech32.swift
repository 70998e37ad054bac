/// Bech32 (BIP-173) as age uses it for keys (C2SP age, "X25519 recipient type"): the checksum
/// constant 1 (not Bech32m), and no 90-character limit. Decoding is strict: one case
/// throughout, a valid checksum, and at most 4 zero padding bits.
package enum Bech32 {
    private static let charset = Array("qpzry9x8gf2tvdw0s3jn54khce6mua7l".utf8)
    private static let generator: [UInt32] = [0x3b6a_57b2, 0x2650_8e6d, 0x1ea1_19fa, 0x3d42_33dd, 0x2a14_62b3]

    /// Encodes `data` under `hrp` in lower case (age writes identities in upper case:
    /// uppercase the result for those).
    package static func encode(hrp: String, data: some Collection<UInt8>) -> String {
        let human = Array(hrp.lowercased().utf8)
        let values = convert(Array(data), from: 8, to: 5, pad: true) ?? []
        let checksum = Self.checksum(human: human, values: values)
        return hrp.lowercased() + "1" + String(decoding: (values + checksum).map { charset[Int($0)] }, as: UTF8.self)
    }

    /// Decodes `text`; the human-readable part is returned in the case it was written in.
    package static func decode(_ text: String) throws(AgeError) -> (hrp: String, data: [UInt8]) {
        let bytes = Array(text.utf8)
        let lower = bytes.map { $0 >= 0x41 && $0 <= 0x5A ? $0 + 0x20 : $0 }
        let upper = bytes.map { $0 >= 0x61 && $0 <= 0x7A ? $0 - 0x20 : $0 }
        guard bytes == lower || bytes == upper else { throw .malformedKey("it mixes upper and lower case") }
        guard let separator = bytes.lastIndex(of: UInt8(ascii: "1")), separator >= 1, separator + 7 <= bytes.count else {
            throw .malformedKey("no Bech32 separator or too short")
        }
        guard bytes[..<separator].allSatisfy({ $0 >= 33 && $0 <= 126 }) else { throw .malformedKey("invalid character in the prefix") }
        var values: [UInt8] = []
        for character in lower[(separator + 1)...] {
            guard let value = charset.firstIndex(of: character) else { throw .malformedKey("invalid Bech32 character") }
            values.append(UInt8(value))
        }
        guard polymod(expand(Array(lower[..<separator])) + values) == 1 else { throw .malformedKey("invalid Bech32 checksum") }
        guard let data = convert(Array(values.dropLast(6)), from: 5, to: 8, pad: false) else {
            throw .malformedKey("invalid Bech32 padding")
        }
        return (String(decoding: bytes[..<separator], as: UTF8.self), data)
    }

    private static func polymod(_ values: [UInt8]) -> UInt32 {
        var check: UInt32 = 1
        for value in values {
            let top = check >> 25
            check = (check & 0x1ff_ffff) << 5 ^ UInt32(value)
            for bit in 0..<5 where top >> UInt32(bit) & 1 == 1 { check ^= generator[bit] }
        }
        return check
    }

    private static func expand(_ human: [UInt8]) -> [UInt8] {
        human.map { $0 >> 5 } + [0] + human.map { $0 & 31 }
    }

    private static func checksum(human: [UInt8], values: [UInt8]) -> [UInt8] {
        let mod = polymod(expand(human) + values + [0, 0, 0, 0, 0, 0]) ^ 1
        return (0..<6).map { UInt8(truncatingIfNeeded: mod >> UInt32(5 * (5 - $0)) & 31) }
    }

    /// Regroups bits (BIP-173's convertbits); without `pad`, leftover bits must be fewer than
    /// `from` and zero.
    private static func convert(_ data: [UInt8], from: Int, to: Int, pad: Bool) -> [UInt8]? {
        var accumulator: UInt32 = 0
        var bits = 0
        var output: [UInt8] = []
        let mask = UInt32(1 << to - 1)
        for value in data {
            guard Int(value) >> from == 0 else { return nil }
            accumulator = accumulator << UInt32(from) | UInt32(value)
            bits += from
            while bits >= to {
                bits -= to
                output.append(UInt8(accumulator >> UInt32(bits) & mask))
            }
            accumulator &= UInt32(1 << bits) - 1
        }
        if pad {
            if bits > 0 { output.append(UInt8(accumulator << UInt32(to - bits) & mask)) }
        } else if bits >= from || accumulator << UInt32(to - bits) & mask != 0 {
            return nil
        }
        return output
    }
}
