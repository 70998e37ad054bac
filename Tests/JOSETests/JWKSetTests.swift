import JOSE
import TestSupport
import Testing

@Suite struct JWKSetTests {
    @Test func skipsUnusableKeysAndKeepsTheRest() throws {
        let good = try TestSigner(TestKeys.rsa, kid: "good").jwk()
        let ec = try TestSigner(TestKeys.p256, kid: "ec").jwk()
        let set = try keySet([
            #"{"kty":"oct","kid":"secret","k":"c2VjcmV0"}"#,
            good,
            #"{"kty":"RSA","kid":"broken","n":"!!","e":"AQAB"}"#,
            try TestSigner(TestKeys.rsa1024, kid: "small").jwk(),
            ec,
            "42",
            try TestSigner(TestKeys.rsa, kid: "enc").jwk(use: "enc"),
        ])
        #expect(set.keys.map(\.keyID) == ["good", "ec"])
        #expect(set.skipped.map(\.index) == [0, 2, 3, 5, 6])
        #expect(set.skipped.map(\.keyID) == ["secret", "broken", "small", nil, "enc"])
        #expect(
            set.skipped.map(\.reason) == [
                .symmetricKey, .malformedMember("n"), .rsaModulusTooSmall(bits: 1024), .notAnObject, .notForSignatures,
            ])
        #expect(set[keyID: "ec"]?.keyType == .ec)
        #expect(set[keyID: "secret"] == nil)
        #expect(set.keys(withID: "good").count == 1)
        #expect("\(set.skipped[0])" == "key 0 (kid \"secret\"): it is a symmetric (oct) key, never used to verify a provider's signature")
    }

    @Test(arguments: [
        ("not json", "the key set is unusable: not valid JSON: unknown literal at byte 0"),
        ("[]", "the key set is unusable: it is not a JSON object"),
        (#"{"keys":{}}"#, "the key set is unusable: it has no keys array"),
        (#"{"key":[]}"#, "the key set is unusable: it has no keys array"),
        (#"{"keys":[],"keys":[]}"#, "the key set is unusable: not valid JSON: duplicate member name ‘keys’ at byte 11"),
    ])
    func failsAsAWholeOnlyWhenItIsNoKeySet(text: String, message: String) {
        do {
            _ = try JWKSet(jsonData: Array(text.utf8))
            Issue.record("accepted")
        } catch {
            #expect(error.category == .signatureOrKey)
            #expect("\(error)" == message)
        }
    }

    @Test func capsSizeAndKeyCount() throws {
        let oversized = Array(#"{"keys":[],"x":""#.utf8) + [UInt8](repeating: 0x61, count: JWKSet.maximumSize) + Array(#""}"#.utf8)
        #expect(throws: JOSEError.invalidKeySet("the document is longer than \(JWKSet.maximumSize) bytes")) {
            try JWKSet(jsonData: oversized)
        }
        let key = try TestSigner(TestKeys.ed25519, kid: nil).jwk()
        let set = try keySet(Array(repeating: key, count: JWKSet.maximumKeyCount + 3))
        #expect(set.keys.count == JWKSet.maximumKeyCount)
        #expect(set.skipped.count == 3)
        #expect(set.skipped.allSatisfy { $0.reason == .tooManyKeys })
    }

    @Test func anEmptySetIsUsableButVerifiesNothing() throws {
        let set = try JWKSet(jsonData: Array(#"{"keys":[]}"#.utf8))
        #expect(set.keys.isEmpty)
        let token = try TestSigner(TestKeys.rsa).token(claims: StandardClaims.object())
        #expect(throws: JOSEError.unknownKeyID("test-key")) { try JWSVerifier().verify(token, keys: set) }
    }
}
