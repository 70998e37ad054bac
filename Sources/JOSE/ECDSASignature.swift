/// The JWS form of an ECDSA signature (RFC 7518 §3.4: `r ‖ s`, each exactly the curve's
/// length) turned into the DER form OpenSSL verifies.
enum ECDSASignature {
    /// The DER `SEQUENCE { INTEGER r, INTEGER s }` for a raw JWS signature, or `nil` when the
    /// signature does not have exactly twice the curve's length or r or s is outside 1 … n−1.
    ///
    /// Checking the range here, before OpenSSL sees the values, refuses `r = s = 0` and the
    /// like whatever OpenSSL's own checks do; checking the exact length refuses padded,
    /// truncated and DER-encoded signatures (a JWS signature has exactly one valid encoding).
    static func der(fromRaw raw: UnsafeBufferPointer<UInt8>, curve: ECCurve) -> [UInt8]? {
        let length = curve.coordinateLength
        guard raw.count == 2 * length else { return nil }
        let r = UnsafeBufferPointer(rebasing: raw[0..<length])
        let s = UnsafeBufferPointer(rebasing: raw[length..<(2 * length)])
        guard curve.isValidScalar(r), curve.isValidScalar(s) else { return nil }

        var body: [UInt8] = []
        body.reserveCapacity(2 * length + 6)
        appendInteger(r, to: &body)
        appendInteger(s, to: &body)
        var der: [UInt8] = [0x30]
        der.reserveCapacity(body.count + 3)
        // The longest body (P-521: two 67-byte integers with headers) is 138 bytes, so the
        // length needs at most the one-byte long form.
        if body.count < 0x80 {
            der.append(UInt8(body.count))
        } else {
            der.append(0x81)
            der.append(UInt8(body.count))
        }
        der.append(contentsOf: body)
        return der
    }

    /// Appends a minimal DER INTEGER for the positive big-endian `value` (not all zeros).
    private static func appendInteger(_ value: UnsafeBufferPointer<UInt8>, to output: inout [UInt8]) {
        var start = 0
        while start < value.count - 1, value[start] == 0 { start += 1 }
        let needsPad = value[start] & 0x80 != 0
        output.append(0x02)
        output.append(UInt8(value.count - start + (needsPad ? 1 : 0)))
        if needsPad { output.append(0) }
        output.append(contentsOf: UnsafeBufferPointer(rebasing: value[start...]))
    }

    /// The raw JWS form (`r ‖ s`, each the curve's length) of a DER `SEQUENCE { INTEGER r,
    /// INTEGER s }` as OpenSSL signs, or nil when it is not that.
    static func raw(fromDER der: [UInt8], curve: ECCurve) -> [UInt8]? {
        var index = 0
        func length() -> Int? {
            guard index < der.count else { return nil }
            let first = Int(der[index])
            index += 1
            if first < 0x80 { return first }
            guard first == 0x81, index < der.count else { return nil }
            index += 1
            return Int(der[index - 1])
        }
        func integer() -> [UInt8]? {
            guard index < der.count, der[index] == 0x02 else { return nil }
            index += 1
            guard let count = length(), count > 0, index + count <= der.count else { return nil }
            var value = Array(der[index..<(index + count)])
            index += count
            while value.count > 1, value[0] == 0 { value.removeFirst() }
            guard value.count <= curve.coordinateLength else { return nil }
            return [UInt8](repeating: 0, count: curve.coordinateLength - value.count) + value
        }
        guard der.first == 0x30 else { return nil }
        index = 1
        guard let total = length(), index + total == der.count, let r = integer(), let s = integer(), index == der.count else {
            return nil
        }
        return r + s
    }
}
