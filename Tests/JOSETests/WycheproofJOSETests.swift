import JOSE
import TestSupport
import Testing

/// Every compact token of Wycheproof's JOSE files (`json_web_signature_test.json`,
/// `json_web_key_test.json`), verified against the public half of its group's key as the JWK
/// set, with every algorithm authkit implements allowed (so only the key and signature rules
/// decide).
///
/// authkit's expected verdict is Wycheproof's, except where authkit is deliberately stricter
/// (docs/jose.md, "Wycheproof decisions"):
/// - HMAC tokens and symmetric keys are always refused, even the ones Wycheproof calls valid;
/// - tokens whose key's own `alg` does not match the token's are refused (RFC 8725 §3.1),
///   although Wycheproof's copies of the RFC 7520 examples expect them to pass.
@Suite struct WycheproofJOSETests {
    /// Vectors Wycheproof calls valid that authkit refuses, with the error it gives.
    static let stricterThanWycheproof: [String: [Int64: JOSEError]] = [
        "json_web_signature_test.json": [
            // RFC 7520 Figure 20 (PS384) under a key whose alg Wycheproof set to PS256.
            346: .algorithmKeyMismatch(.ps384, keyID: "bilbo.baggins@hobbiton.example"),
            350: .algorithmKeyMismatch(.ps384, keyID: "bilbo.baggins@hobbiton.example"),
            // RFC 7520 Figure 27 (ES512) under a key whose alg is "ES521", which is no algorithm.
            347: .keyNotUsable(keyID: "bilbo.baggins@hobbiton.example", reason: .unsupportedAlgorithm("ES521")),
            351: .keyNotUsable(keyID: "bilbo.baggins@hobbiton.example", reason: .unsupportedAlgorithm("ES521")),
        ]
    ]

    @Test(arguments: ["json_web_signature_test.json", "json_web_key_test.json"])
    func everyTokenGivesItsExpectedVerdict(file: String) throws {
        let document = try fixtureJSON("wycheproof/\(file)")
        let verifier = JWSVerifier(allowedAlgorithms: Set(JWSAlgorithm.allCases))
        var failures: [String] = []
        var count = 0
        var refusedHMAC = 0
        for group in document["testGroups"]?.arrayValue ?? [] {
            let keys = try Self.keySet(group)
            for test in group["tests"]?.arrayValue ?? [] {
                count += 1
                let id = test["tcId"]?.int64Value ?? -1
                let comment = test["comment"]?.stringValue ?? ""
                guard let token = test["jws"]?.stringValue else {
                    failures.append("\(id) (no compact token)")
                    continue
                }
                var outcome: Result<VerifiedJWS, JOSEError>
                do {
                    outcome = .success(try verifier.verify(token, keys: keys))
                } catch {
                    outcome = .failure(error)
                }
                if let expectedError = Self.stricterThanWycheproof[file]?[id] {
                    if case .failure(let error) = outcome, error == expectedError { continue }
                    failures.append("\(id) (\(comment): expected \(expectedError), got \(outcome))")
                    continue
                }
                let alg = (try? CompactJWS(parsing: token))?.header.algorithm ?? ""
                if alg.hasPrefix("HS") || alg == "none" || keys.keys.isEmpty {
                    // HMAC, none, or only symmetric keys: refused whatever Wycheproof says.
                    if case .success = outcome { failures.append("\(id) (\(comment): an HMAC/symmetric token was accepted)") }
                    if case .failure(let error) = outcome, alg.hasPrefix("HS") {
                        if error == .forbiddenAlgorithm(alg) { refusedHMAC += 1 } else { failures.append("\(id) (\(comment): \(error))") }
                    }
                    continue
                }
                let expectedValid = test["result"]?.stringValue == "valid"
                switch (outcome, expectedValid) {
                case (.success, true), (.failure, false): break
                case (.success, false): failures.append("\(id) (\(comment): accepted, Wycheproof says invalid)")
                case (.failure(let error), true): failures.append("\(id) (\(comment): refused with \(error), Wycheproof says valid)")
                }
            }
        }
        #expect(count == document["numberOfTests"]?.int64Value.map(Int.init), "not every vector was run")
        #expect(refusedHMAC > 0)
        #expect(
            failures.isEmpty, "\(file): \(failures.count) of \(count) vectors gave the wrong verdict: \(failures.joined(separator: "; "))")
    }

    /// The group's public key(s) as a JWK set; for symmetric groups (no public half) the
    /// secret key set itself, which authkit must refuse to use.
    static func keySet(_ group: JSONValue) throws -> JWKSet {
        let key = group["public"] ?? group["private"] ?? .null
        if key["keys"] != nil { return try JWKSet(json: key) }
        return try JWKSet(json: ["keys": [key]])
    }

    @Test(arguments: ["json_web_signature_test.json", "json_web_key_test.json"])
    func everySymmetricKeyIsSkippedAsSuch(file: String) throws {
        let document = try fixtureJSON("wycheproof/\(file)")
        var symmetric = 0
        for group in document["testGroups"]?.arrayValue ?? [] where group["public"] == nil {
            let secret = group["private"] ?? .null
            let entries = secret["keys"]?.arrayValue ?? [secret]
            let octets = entries.filter { $0["kty"]?.stringValue == "oct" }.count
            let keys = try Self.keySet(group)
            #expect(keys.skipped.filter { $0.reason == .symmetricKey }.count == octets)
            symmetric += octets
        }
        #expect(symmetric > 0)
    }
}
