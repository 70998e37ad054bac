import JOSE
import TestSupport
import Testing

@Suite struct Base64URLTests {
    @Test(
        arguments: [
            ("", []),
            ("Zg", Array("f".utf8)),
            ("Zm8", Array("fo".utf8)),
            ("Zm9v", Array("foo".utf8)),
            ("Zm9vYg", Array("foob".utf8)),
            ("_-8", [0xFF, 0xEF]),
            ("AQAB", [0x01, 0x00, 0x01]),
        ] as [(String, [UInt8])])
    func decodesKnownValues(text: String, bytes: [UInt8]) throws {
        #expect(try Base64URL.decode(text) == bytes)
        #expect(Base64URL.encode(bytes) == text)
    }

    @Test(arguments: [
        "Zg==",  // padding
        "Zm9v\n",  // whitespace
        "Zm 9v",
        "Zm9v+",  // standard base64 alphabet
        "Zm9v/",
        "Z",  // one stray character
        "Zm9vY",
        "Zh",  // non-zero unused bits (canonical form is "Zg")
        "Zm9",  // "fo" with a non-zero unused bit set
        "Zm9vYmFy.",
        "é",
    ])
    func refusesNonStrictInput(text: String) {
        #expect(throws: JOSEError.invalidBase64URL) { try Base64URL.decode(text) }
    }

    /// Every length up to 300 and every byte value, against Foundation's decoder; and each
    /// encoding with one character replaced by every other byte must decode only when that
    /// byte is in the alphabet (and then to what Foundation says).
    @Test func agreesWithFoundationOnRandomInput() throws {
        var generator = SystemRandomNumberGenerator()
        for length in 0...300 {
            let bytes = (0..<length).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
            let text = TestBase64URL.encode(bytes)
            #expect(Base64URL.encode(bytes) == text)
            #expect(try Base64URL.decode(text) == bytes)
        }
        let text = Array(TestBase64URL.encode((0..<40).map { UInt8(truncatingIfNeeded: $0 * 7) }).utf8)
        let alphabet = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
        for position in 0..<(text.count - 1) {
            for replacement in UInt8.min...UInt8.max {
                var mutated = text
                mutated[position] = replacement
                let ours = try? Base64URL.decode(bytes: mutated)
                if alphabet.contains(replacement) {
                    #expect(ours == TestBase64URL.decode(String(decoding: mutated, as: UTF8.self)))
                } else {
                    #expect(ours == nil, "byte \(replacement) at \(position) was accepted")
                }
            }
        }
    }
}
