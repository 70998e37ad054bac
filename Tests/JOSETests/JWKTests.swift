import JOSE
import TestSupport
import Testing

@Suite struct JWKTests {
    func rejection(_ json: String) -> KeyRejection? {
        // The JSON parser throws JSONError (StrictJSON); only JWK's own errors are under test.
        guard let value = try? JSONValue(parsing: json) else {
            Issue.record("the test's JSON does not parse")
            return nil
        }
        do {
            _ = try JWK(json: value)
            return nil
        } catch {
            if case .unusableKey(let reason) = error { return reason }
            Issue.record("unexpected error \(error)")
            return nil
        }
    }

    @Test func readsEachKeyType() throws {
        let rsa = try JWK(json: JSONValue(parsing: try TestSigner(TestKeys.rsa).jwk()))
        #expect(rsa.keyType == .rsa)
        #expect(rsa.bitLength == 2048)
        #expect(rsa.keyID == "test-key")
        #expect(rsa.algorithms == [.rs256, .rs384, .rs512, .ps256, .ps384, .ps512])
        let p384 = try JWK(json: JSONValue(parsing: try TestSigner(TestKeys.p384).jwk()))
        #expect(p384.curve == "P-384")
        #expect(p384.algorithms == [.es384])
        #expect(p384.canVerify(.es384) && !p384.canVerify(.es256) && !p384.canVerify(.rs256))
        let ed = try JWK(json: JSONValue(parsing: try TestSigner(TestKeys.ed25519).jwk(alg: "EdDSA")))
        #expect(ed.algorithm == .edDSA)
        #expect(ed.canVerify(.edDSA))
        let rsaPS = try JWK(json: JSONValue(parsing: try TestSigner(TestKeys.rsa).jwk(alg: "PS256")))
        #expect(rsaPS.canVerify(.ps256) && !rsaPS.canVerify(.rs256))
    }

    @Test func refusesKeysNotMeantForVerification() throws {
        let rsa = try TestKeys.rsa.get()
        let members = try rsa.publicJWKMembers().map { "\"\($0.0)\":\"\($0.1)\"" }.joined(separator: ",")
        #expect(rejection("[]") == .notAnObject)
        #expect(rejection(#"{"n":"AQAB"}"#) == .missingKeyType)
        #expect(rejection(#"{"kty":1}"#) == .malformedMember("kty"))
        #expect(rejection(#"{"kty":"oct","k":"c2VjcmV0"}"#) == .symmetricKey)
        #expect(rejection(#"{"kty":"DSA"}"#) == .unsupportedKeyType("DSA"))
        #expect(rejection("{\(members),\"use\":\"enc\"}") == .notForSignatures)
        #expect(rejection("{\(members),\"key_ops\":[\"encrypt\"]}") == .verifyNotPermitted)
        #expect(rejection("{\(members),\"key_ops\":\"verify\"}") == .malformedMember("key_ops"))
        #expect(rejection("{\(members),\"alg\":\"HS256\"}") == .unsupportedAlgorithm("HS256"))
        #expect(rejection("{\(members),\"alg\":\"RSA1_5\"}") == .unsupportedAlgorithm("RSA1_5"))
        #expect(rejection("{\(members),\"alg\":\"ES256\"}") == .algorithmMismatch(.es256))
        #expect(rejection("{\(members),\"kid\":5}") == .malformedMember("kid"))
        for member in ["d", "p", "q", "dp", "dq", "qi", "oth"] {
            #expect(rejection("{\(members),\"\(member)\":\"AQAB\"}") == .privateKeyMaterial)
        }
        // Key ops that include verify are fine.
        _ = try JWK(json: JSONValue(parsing: "{\(members),\"key_ops\":[\"verify\",\"sign\"]}"))
    }

    @Test func appliesTheRSARules() throws {
        let small = try TestKeys.rsa1024.get().publicJWK()
        #expect(rejection(small) == .rsaModulusTooSmall(bits: 1024))
        let rsa = try TestKeys.rsa.get().publicJWKMembers()
        let n = rsa[1].1
        #expect(rejection(#"{"kty":"RSA","n":"\#(n)","e":"AQ"}"#) == .rsaExponentInvalid)  // e = 1
        #expect(rejection(#"{"kty":"RSA","n":"\#(n)","e":"AAE"}"#) == .rsaExponentInvalid)  // e = 1 with a leading zero
        #expect(rejection(#"{"kty":"RSA","n":"\#(n)","e":"AQAA"}"#) == .rsaExponentInvalid)  // even
        #expect(rejection(#"{"kty":"RSA","n":"\#(n)","e":"AQAAAAAAAAAB"}"#) == .rsaExponentInvalid)  // 72 bits
        #expect(rejection(#"{"kty":"RSA","n":"\#(n)"}"#) == .malformedMember("e"))
        #expect(rejection(#"{"kty":"RSA","n":"\#(n)=","e":"AQAB"}"#) == .malformedMember("n"))
        var even = try #require(TestBase64URL.decode(n))
        even[even.count - 1] &= 0xFE
        #expect(rejection(#"{"kty":"RSA","n":"\#(TestBase64URL.encode(even))","e":"AQAB"}"#) == .rsaModulusInvalid)
        // e = 3 is allowed (Wycheproof has valid signatures with it); a leading zero in n is tolerated.
        let padded = TestBase64URL.encode([0] + (TestBase64URL.decode(n) ?? []))
        #expect(try JWK(json: JSONValue(parsing: #"{"kty":"RSA","n":"\#(padded)","e":"AQAB"}"#)).bitLength == 2048)
    }

    @Test func appliesTheECRules() throws {
        let members = try TestKeys.p256.get().publicJWKMembers()
        let x = members[2].1, y = members[3].1
        #expect(rejection(#"{"kty":"EC","crv":"P-384","x":"\#(x)","y":"\#(y)"}"#) == .wrongCoordinateLength("x"))
        #expect(rejection(#"{"kty":"EC","crv":"secp256k1","x":"\#(x)","y":"\#(y)"}"#) == .unsupportedCurve("secp256k1"))
        #expect(rejection(#"{"kty":"EC","x":"\#(x)","y":"\#(y)"}"#) == .malformedMember("crv"))
        #expect(rejection(#"{"kty":"EC","crv":"P-256","x":"\#(x)","y":"\#(y)","alg":"ES384"}"#) == .algorithmMismatch(.es384))
        var yBytes = try #require(TestBase64URL.decode(y))
        yBytes[31] ^= 1
        #expect(rejection(#"{"kty":"EC","crv":"P-256","x":"\#(x)","y":"\#(TestBase64URL.encode(yBytes))"}"#) == .pointNotOnCurve)
        let zero = TestBase64URL.encode([UInt8](repeating: 0, count: 32))
        #expect(rejection(#"{"kty":"EC","crv":"P-256","x":"\#(zero)","y":"\#(zero)"}"#) == .pointNotOnCurve)
        // A coordinate ≥ p is refused even though it fits in 32 bytes.
        let big = TestBase64URL.encode([UInt8](repeating: 0xFF, count: 32))
        #expect(rejection(#"{"kty":"EC","crv":"P-256","x":"\#(big)","y":"\#(y)"}"#) == .pointNotOnCurve)
    }

    @Test func appliesTheOKPRules() throws {
        let x = try TestKeys.ed25519.get().publicJWKMembers()[2].1
        #expect(rejection(#"{"kty":"OKP","crv":"Ed448","x":"\#(x)"}"#) == .unsupportedCurve("Ed448"))
        #expect(rejection(#"{"kty":"OKP","crv":"X25519","x":"\#(x)"}"#) == .unsupportedCurve("X25519"))
        let longer = TestBase64URL.encode((TestBase64URL.decode(x) ?? []) + [0])
        #expect(rejection(#"{"kty":"OKP","crv":"Ed25519","x":"\#(longer)"}"#) == .wrongCoordinateLength("x"))
        #expect(rejection(#"{"kty":"OKP","crv":"Ed25519","x":"\#(x)","alg":"ES256"}"#) == .algorithmMismatch(.es256))
        #expect(rejection(#"{"kty":"OKP","crv":"Ed25519","x":"\#(x)","d":"\#(x)"}"#) == .privateKeyMaterial)
    }

    @Test func refusesROCAModuli() throws {
        // The ROCA key of Wycheproof's JOSE key tests (CVE-2017-15361).
        let keys = try fixtureJSON("wycheproof/json_web_key_test.json")["testGroups"]?.arrayValue ?? []
        let roca = try #require(keys.first { $0["comment"]?.stringValue == "jws_rsa_roca_key" }?["public"]?["keys"]?.arrayValue?.first)
        #expect(throws: JOSEError.unusableKey(.rsaROCAVulnerable)) { try JWK(json: roca) }
        // Generated keys and the providers' keys do not carry the fingerprint.
        _ = try JWK(json: JSONValue(parsing: try TestKeys.rsa.get().publicJWK()))
    }

    @Test func equalityFollowsTheKeyMaterial() throws {
        let text = try TestSigner(TestKeys.p256).jwk()
        let first = try JWK(json: JSONValue(parsing: text))
        let second = try JWK(json: JSONValue(parsing: text))
        #expect(first == second)
        #expect(Set([first, second]).count == 1)
        #expect(first != (try JWK(json: JSONValue(parsing: try TestSigner(TestKeys.p384).jwk()))))
        #expect("\(first)".contains("P-256") && "\(first)".contains("test-key"))
    }

    @Test func thumbprintsAsRFC7638Does() throws {
        // RFC 7638 §3.1's example RSA key (its alg and kid are not part of the thumbprint).
        let rsa = try JWK(
            json: JSONValue(
                parsing:
                    #"{"kty":"RSA","n":"0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw","e":"AQAB","alg":"RS256","kid":"2011-04-29"}"#
            ))
        #expect(try rsa.thumbprint() == "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs")
        #expect(Array(rsa.publicMembers.map(\.key)) == ["e", "kty", "n"])
        let ed = try JWK(json: JSONValue(parsing: try TestSigner(TestKeys.ed25519).jwk(alg: "EdDSA")))
        #expect(Array(ed.publicMembers.map(\.key)) == ["crv", "kty", "x"])
    }
}
