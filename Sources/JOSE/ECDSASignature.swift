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
}
