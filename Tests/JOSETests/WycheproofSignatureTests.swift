@testable import JOSE
import TestSupport
import Testing

/// Every test vector of Wycheproof's signature files in Fixtures/wycheproof/, wrapped as a JWS
/// (header `{"alg":…,"kid":"wycheproof"}`, the vector's message as the signing input) and
/// sent through `JWSVerifier.verify`: the same key rules, length and range checks and OpenSSL
/// calls a real token meets.
///
/// `acceptable` vectors are decided, not skipped: the only ones in these files are RSA
/// PKCS#1 v1.5 signatures whose DigestInfo lacks the NULL parameters ("MissingNull"), which
/// authkit rejects (see docs/jose.md, "Wycheproof decisions").
@Suite struct WycheproofSignatureTests {
    static let files = [
        "rsa_signature_2048_sha256_test.json", "rsa_signature_2048_sha384_test.json", "rsa_signature_2048_sha512_test.json",
        "rsa_signature_3072_sha256_test.json", "rsa_signature_4096_sha256_test.json", "rsa_pss_2048_sha256_mgf1_32_test.json",
        "ecdsa_secp256r1_sha256_p1363_test.json", "ecdsa_secp384r1_sha384_p1363_test.json", "ecdsa_secp521r1_sha512_p1363_test.json",
        "ed25519_test.json",
    ]

    /// authkit's verdict on Wycheproof's `acceptable` vectors, by flag.
    static let acceptableDecisions: [String: Bool] = ["MissingNull": false]

    @Test(arguments: files)
    func everyVectorGivesItsExpectedVerdict(file: String) throws {
        let document = try fixtureJSON("wycheproof/\(file)")
        let groups = try #require(document["testGroups"]?.arrayValue)
        var failures: [String] = []
        var count = 0
        for group in groups {
            let algorithm = try Self.algorithm(document: document, group: group)
            let keys = try JWKSet(json: ["keys": [try Self.publicJWK(group)]])
            let header = try JOSEHeader(json: ["alg": .string(algorithm.rawValue), "kid": "wycheproof"])
            let verifier = JWSVerifier(allowedAlgorithms: [algorithm])
            for test in group["tests"]?.arrayValue ?? [] {
                count += 1
                let id = test["tcId"]?.int64Value ?? -1
                let expected: Bool
                switch test["result"]?.stringValue {
                case "valid": expected = true
                case "invalid": expected = false
                case "acceptable":
                    let flags = test["flags"]?.arrayValue?.compactMap(\.stringValue) ?? []
                    guard let decision = flags.lazy.compactMap({ Self.acceptableDecisions[$0] }).first else {
                        failures.append("\(id) (acceptable with undecided flags \(flags))")
                        continue
                    }
                    expected = decision
                default:
                    failures.append("\(id) (unknown result)")
                    continue
                }
                let jws = CompactJWS(
                    header: header, signingInput: hexBytes(test["msg"]?.stringValue ?? ""), payload: [],
                    signature: hexBytes(test["sig"]?.stringValue ?? ""))
                var accepted = false
                do {
                    _ = try verifier.verify(jws, keys: keys)
                    accepted = true
                } catch {
                    // A key refused outright is a rejection too, but only if the set is empty
                    // because of it; anything but a signature/key error here is a bug.
                    if error.category != .signatureOrKey { failures.append("\(id) (unexpected \(error))") }
                }
                if accepted != expected {
                    failures.append("\(id) (\(test["comment"]?.stringValue ?? ""): expected \(expected ? "valid" : "invalid"))")
                }
            }
        }
        #expect(count == document["numberOfTests"]?.int64Value.map(Int.init), "not every vector was run")
        #expect(
            failures.isEmpty, "\(file): \(failures.count) of \(count) vectors gave the wrong verdict: \(failures.joined(separator: "; "))")
    }

    static func algorithm(document: JSONValue, group: JSONValue) throws -> JWSAlgorithm {
        let sha = group["sha"]?.stringValue
        switch document["algorithm"]?.stringValue {
        case "RSASSA-PKCS1-v1_5":
            return ["SHA-256": .rs256, "SHA-384": .rs384, "SHA-512": .rs512][sha ?? ""] ?? .rs256
        case "RSASSA-PSS":
            return ["SHA-256": .ps256, "SHA-384": .ps384, "SHA-512": .ps512][sha ?? ""] ?? .ps256
        case "ECDSA":
            return ["secp256r1": .es256, "secp384r1": .es384, "secp521r1": .es512][group["publicKey"]?["curve"]?.stringValue ?? ""]
                ?? .es256
        case "EDDSA":
            return .edDSA
        default:
            throw JOSEError.unsupportedAlgorithm(document["algorithm"]?.stringValue ?? "?")
        }
    }

    /// The group's public key as a JWK with kid "wycheproof": Wycheproof's own JWK where it
    /// has one, otherwise built from the key's coordinates (padded to the curve's length).
    static func publicJWK(_ group: JSONValue) throws -> JSONValue {
        if var jwk = (group["publicKeyJwk"] ?? group["keyJwk"])?.objectValue {
            jwk["kid"] = "wycheproof"
            return .object(jwk)
        }
        let key = try #require(group["publicKey"])
        let length = ["secp256r1": 32, "secp384r1": 48, "secp521r1": 66][key["curve"]?.stringValue ?? ""] ?? 0
        func coordinate(_ name: String) -> String {
            var bytes = hexBytes(key[name]?.stringValue ?? "")
            while bytes.count > length, bytes.first == 0 { bytes.removeFirst() }
            while bytes.count < length { bytes.insert(0, at: 0) }
            return TestBase64URL.encode(bytes)
        }
        let crv = ["secp256r1": "P-256", "secp384r1": "P-384", "secp521r1": "P-521"][key["curve"]?.stringValue ?? ""] ?? "?"
        return ["kty": "EC", "crv": .string(crv), "x": .string(coordinate("wx")), "y": .string(coordinate("wy")), "kid": "wycheproof"]
    }
}
