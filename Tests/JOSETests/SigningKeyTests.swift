import JOSE
import TestSupport
import Testing

@Suite struct SigningKeyTests {
    func verifies(_ token: String, with key: JWK) -> Bool {
        (try? JWSVerifier(allowedAlgorithms: [.es256]).verify(token, keys: JWKSet(keys: [key]))) != nil
    }

    @Test func signsES256ThatVerifiesWithItsPublicHalf() throws {
        let key = try SigningKey.generate()
        #expect(key.location == .memory)
        #expect(key.publicKey.keyType == .ec && key.publicKey.curve == "P-256")
        var header = JSONObject()
        header["typ"] = .string("dpop+jwt")
        header["jwk"] = .object(key.publicKey.publicMembers)
        var payload = JSONObject()
        payload["htm"] = .string("POST")
        let token = try key.compactJWS(header: header, payload: payload)
        let jws = try CompactJWS(parsing: token)
        #expect(jws.header.algorithm == "ES256")
        #expect(jws.signature.count == 64)
        #expect(jws.payload == Array(#"{"htm":"POST"}"#.utf8))
        #expect(verifies(token, with: key.publicKey))
        // Another key's public half does not verify it.
        #expect(!verifies(token, with: try SigningKey.generate().publicKey))
        // Each signature is fresh (ECDSA's random k) and each verifies.
        let again = try key.compactJWS(header: header, payload: payload)
        #expect(again != token && verifies(again, with: key.publicKey))
    }

    @Test func thePrivateJWKReadsBackAsTheSameKey() throws {
        let key = try SigningKey.generate()
        let stored = try #require(key.privateJWK)
        #expect(stored["d"]?.stringValue?.count == 43)
        #expect(key.publicKey.publicMembers["d"] == nil)
        let read = try SigningKey(privateJWK: stored)
        #expect(try read.publicKey.thumbprint() == key.publicKey.thumbprint())
        #expect(verifies(try read.compactJWS(header: JSONObject(), payload: JSONObject()), with: key.publicKey))
    }

    @Test func aStoredKeyThatDoesNotHoldTogetherIsRefused() throws {
        let key = try #require(try SigningKey.generate().privateJWK)
        let other = try #require(try SigningKey.generate().privateJWK)
        // Another key's private scalar with this key's public point: the halves disagree.
        var mixed = key
        mixed["d"] = other["d"]
        #expect(throws: JOSEError.self) { try SigningKey(privateJWK: mixed) }
        var cases: [JSONObject] = []
        for (member, value) in [
            ("d", JSONValue.string("AAAA")), ("d", .string(String(repeating: "A", count: 43))),
            ("x", .string(String(repeating: "A", count: 43))), ("crv", .string("P-384")), ("kty", .string("RSA")),
            ("d", .number(1)), ("x", .string("not base64!")),
        ] {
            var broken = key
            broken[member] = value
            cases.append(broken)
        }
        var missing = key
        missing["d"] = nil
        cases.append(missing)
        for broken in cases {
            do {
                _ = try SigningKey(privateJWK: broken)
                Issue.record("accepted \(broken)")
            } catch {
                guard case .signingKey(let reason) = error else {
                    Issue.record("unexpected \(error)")
                    continue
                }
                // The reason never carries the key.
                #expect(!reason.contains(key["d"]?.stringValue ?? "-"))
            }
        }
    }

    @Test func readsRFC9449sExampleKey() throws {
        // RFC 9449 §4.1: the proof's example public key and, in §6.1, its thumbprint.
        var object = JSONObject()
        object["kty"] = .string("EC")
        object["x"] = .string("l8tFrhx-34tV3hRICRDY9zCkDlpBhF42UQUfWVAWBFs")
        object["y"] = .string("9VE4jf_Ok_o64zbTTlcuNJajHmt6v9TDVrU0CdvGRDA")
        object["crv"] = .string("P-256")
        let key = try JWK(object: object)
        #expect(try key.thumbprint() == "0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I")
        #expect(
            JSONValue.object(key.publicMembers).serialized()
                == #"{"crv":"P-256","kty":"EC","x":"l8tFrhx-34tV3hRICRDY9zCkDlpBhF42UQUfWVAWBFs","y":"9VE4jf_Ok_o64zbTTlcuNJajHmt6v9TDVrU0CdvGRDA"}"#
        )
    }
}
