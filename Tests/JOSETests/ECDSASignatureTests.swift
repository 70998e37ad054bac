@testable import JOSE
import Testing

@Suite struct ECDSASignatureTests {
    func der(_ raw: [UInt8], _ curve: ECCurve) -> [UInt8]? {
        raw.withUnsafeBufferPointer { ECDSASignature.der(fromRaw: $0, curve: curve) }
    }

    @Test func encodesMinimalPositiveIntegers() throws {
        let r = [UInt8](repeating: 0, count: 31) + [0x01]  // leading zeros dropped
        let s = [0x80] + [UInt8](repeating: 0, count: 31)  // high bit set: a zero byte is added
        let encoded = try #require(der(r + s, .p256))
        #expect(encoded == [0x30, 0x26, 0x02, 0x01, 0x01, 0x02, 0x21, 0x00, 0x80] + [UInt8](repeating: 0, count: 31))
    }

    @Test func usesTheLongLengthFormForP521() throws {
        // r and s just below n, each 66 bytes: 2 × (2 + 66) = 136 > 127.
        var value = ECCurve.p521.order
        value[value.count - 1] -= 1
        let encoded = try #require(der(value + value, .p521))
        #expect(Array(encoded.prefix(3)) == [0x30, 0x81, 136])
        #expect(encoded.count == 139)
    }

    @Test func refusesWrongLengthsAndOutOfRangeValues() {
        let order = ECCurve.p256.order
        let one = [UInt8](repeating: 0, count: 31) + [1]
        #expect(der(one + one, .p384) == nil)  // 64 bytes is P-256's length, not P-384's
        #expect(der(one + one + [0], .p256) == nil)
        #expect(der(Array((one + one).dropFirst()), .p256) == nil)
        #expect(der([UInt8](repeating: 0, count: 32) + one, .p256) == nil)  // r = 0
        #expect(der(one + order, .p256) == nil)  // s = n
        #expect(der(order + one, .p256) == nil)  // r = n
        #expect(der([UInt8](repeating: 0xFF, count: 32) + one, .p256) == nil)  // r > n
        #expect(der(one + one, .p256) != nil)
    }

    @Test func theCurveOrdersComeFromOpenSSL() {
        #expect(ECCurve.p256.order == hexBytes("ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551"))
        #expect(ECCurve.p384.order.count == 48 && ECCurve.p384.order.suffix(4) == [0xCC, 0xC5, 0x29, 0x73])
        #expect(ECCurve.p521.order.count == 66 && ECCurve.p521.order.first == 0x01)
    }

    @Test func readsDERBackToTheRawForm() throws {
        let r = [UInt8](repeating: 0, count: 31) + [0x01]
        let s = [0x80] + [UInt8](repeating: 0x11, count: 31)
        let encoded = try #require(der(r + s, .p256))
        #expect(ECDSASignature.raw(fromDER: encoded, curve: .p256) == r + s)
        var value = ECCurve.p521.order
        value[value.count - 1] -= 1
        #expect(ECDSASignature.raw(fromDER: try #require(der(value + value, .p521)), curve: .p521) == value + value)
    }

    @Test func refusesWhatIsNotASignatureSequence() throws {
        let encoded = try #require(der([UInt8](repeating: 7, count: 64), .p256))
        #expect(ECDSASignature.raw(fromDER: [], curve: .p256) == nil)
        #expect(ECDSASignature.raw(fromDER: encoded + [0], curve: .p256) == nil)  // trailing byte
        #expect(ECDSASignature.raw(fromDER: Array(encoded.dropLast()), curve: .p256) == nil)  // cut short
        #expect(ECDSASignature.raw(fromDER: [0x31] + encoded.dropFirst(), curve: .p256) == nil)  // a SET
        // An integer longer than the curve's coordinates.
        let long = [0x30, 0x25, 0x02, 0x21, 0x01] + [UInt8](repeating: 1, count: 32) + [0x02, 0x00]
        #expect(ECDSASignature.raw(fromDER: long, curve: .p256) == nil)
    }
}
