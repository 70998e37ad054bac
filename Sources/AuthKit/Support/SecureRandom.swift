import JOSE

/// Random bytes for PKCE verifiers, `state` and `nonce`, from Swift's
/// `SystemRandomNumberGenerator`, which on Linux reads the kernel CSPRNG with `getrandom(2)`
/// (falling back to `/dev/urandom`).
enum SecureRandom {
    struct Unavailable: Error, Sendable, CustomStringConvertible {
        var description: String { "the system random number generator is unavailable" }
    }

    static func bytes(_ count: Int) throws(Unavailable) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        var buffer = [UInt8]()
        buffer.reserveCapacity(count + 8)
        while buffer.count < count {
            withUnsafeBytes(of: generator.next() as UInt64) { buffer.append(contentsOf: $0) }
        }
        return Array(buffer.prefix(count))
    }

    /// A base64url string (no padding) of `byteCount` random bytes: 32 bytes give 43
    /// characters and 256 bits of entropy.
    static func token(byteCount: Int = 32) throws(Unavailable) -> String {
        Base64URL.encode(try bytes(byteCount))
    }
}

/// Comparison whose time does not depend on where the inputs differ (RFC 9700 §4.7: `state`
/// compared in constant time).
enum ConstantTime {
    static func equals(_ lhs: some StringProtocol, _ rhs: some StringProtocol) -> Bool {
        let a = Array(lhs.utf8), b = Array(rhs.utf8)
        var difference = UInt8(truncatingIfNeeded: a.count ^ b.count)
        let count = max(a.count, b.count)
        for index in 0..<count {
            let x = index < a.count ? a[index] : 0
            let y = index < b.count ? b[index] : 0
            difference |= x ^ y
        }
        return difference == 0 && a.count == b.count
    }
}
