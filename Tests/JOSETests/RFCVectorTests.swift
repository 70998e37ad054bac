import Foundation
import JOSE
import TestSupport
import Testing

/// The examples of RFC 7515 (A.2, A.3), RFC 8037 (A.4) and RFC 7520 (§4.1–4.4), copied from
/// the RFC text into Fixtures/rfc/ and checked independently (Python `cryptography`) when
/// they were written.
@Suite struct RFCVectorTests {
    static let files = [
        "rfc7515-a2-rs256.json", "rfc7515-a3-es256.json", "rfc8037-a4-eddsa.json",
        "rfc7520-4.1-rs256.json", "rfc7520-4.2-ps384.json", "rfc7520-4.3-es512.json", "rfc7520-4.4-hs256.json",
    ]

    @Test(arguments: files)
    func givesTheExpectedVerdict(file: String) throws {
        let fixture = try fixtureJSON("rfc/\(file)")
        let token = try #require(fixture["token"]?.stringValue)
        let alg = try #require(fixture["algorithm"]?.stringValue)
        let keys = try JWKSet(json: try #require(fixture["jwks"]))
        let verifier = JWSVerifier(allowedAlgorithms: Set(JWSAlgorithm.allCases))
        switch fixture["expected"]?.stringValue {
        case "valid":
            let verified = try verifier.verify(token, keys: keys)
            #expect(verified.algorithm.rawValue == alg)
            if let payload = fixture["payload"]?.stringValue {
                #expect(verified.payload == Array(payload.utf8))
            }
            // Only with the algorithm allowed.
            #expect(throws: JOSEError.self) { try JWSVerifier(allowedAlgorithms: []).verify(token, keys: keys) }
            // And only over these exact bytes.
            var changed = Array(token.utf8)
            let middle =
                token.utf8.firstIndex(of: UInt8(ascii: ".")).map { token.utf8.distance(from: token.utf8.startIndex, to: $0) + 3 } ?? 0
            changed[middle] = changed[middle] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
            #expect(throws: JOSEError.self) { try verifier.verify(String(decoding: changed, as: UTF8.self), keys: keys) }
        case "forbiddenAlgorithm":
            #expect(throws: JOSEError.forbiddenAlgorithm(alg)) { try verifier.verify(token, keys: keys) }
            #expect(keys.keys.isEmpty)
            #expect(keys.skipped.map(\.reason) == [.symmetricKey])
        default:
            Issue.record("fixture \(file) has no known expectation")
        }
    }

    /// RFC 7515 A.2 as an id_token-like JWT: its claims are {"iss":"joe","exp":1300819380,…}.
    @Test func rfc7515ClaimsAreReadable() throws {
        let fixture = try fixtureJSON("rfc/rfc7515-a2-rs256.json")
        let verified = try JWSVerifier().verify(
            try #require(fixture["token"]?.stringValue), keys: JWKSet(json: try #require(fixture["jwks"])))
        let claims = try JWTClaims(payload: verified.payload)
        #expect(claims.issuer == "joe")
        #expect(claims.expirationSeconds == 1_300_819_380)
        #expect(claims["http://example.com/is_root"] == .bool(true))
    }
}
