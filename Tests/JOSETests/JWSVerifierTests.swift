import JOSE
import TestSupport
import Testing

@Suite struct JWSVerifierTests {
    static let everyAlgorithm: Set<JWSAlgorithm> = Set(JWSAlgorithm.allCases)

    // MARK: Every algorithm, both ways

    @Test(
        arguments: [
            ("RS256", TestKeys.rsa), ("RS384", TestKeys.rsa), ("RS512", TestKeys.rsa),
            ("PS256", TestKeys.rsa), ("PS384", TestKeys.rsa), ("PS512", TestKeys.rsa),
            ("ES256", TestKeys.p256), ("ES384", TestKeys.p384), ("ES512", TestKeys.p521),
            ("EdDSA", TestKeys.ed25519),
        ] as [(String, Result<TestSigningKey, any Error>)])
    func verifiesEveryAlgorithmAndRefusesTampering(alg: String, key: Result<TestSigningKey, any Error>) throws {
        let signer = try TestSigner(key, alg: alg)
        let keys = try keySet([try signer.jwk()])
        let token = try signer.token(claims: StandardClaims.object())
        let algorithm = try #require(JWSAlgorithm(rawValue: alg))
        let verified = try JWSVerifier(allowedAlgorithms: [algorithm]).verify(token, keys: keys)
        #expect(verified.algorithm == algorithm)
        #expect(verified.key.keyID == "test-key")
        #expect(verified.payload == StandardClaims.object().serializedBytes())

        // One changed character in the payload, and one in the signature.
        let parts = token.split(separator: ".").map(String.init)
        let changedPayload = TestBase64URL.encode(StandardClaims.object([("sub", "someone-else")]).serializedBytes())
        #expect(throws: JOSEError.badSignature) {
            try JWSVerifier(allowedAlgorithms: [algorithm]).verify("\(parts[0]).\(changedPayload).\(parts[2])", keys: keys)
        }
        var signature = try #require(TestBase64URL.decode(parts[2]))
        signature[signature.count / 2] ^= 0x01
        #expect(throws: JOSEError.badSignature) {
            try JWSVerifier(allowedAlgorithms: [algorithm]).verify("\(parts[0]).\(parts[1]).\(TestBase64URL.encode(signature))", keys: keys)
        }
        // A signature one byte short, one byte long, or empty.
        for changed in [Array(signature.dropLast()), signature + [0], []] {
            #expect(throws: JOSEError.badSignature) {
                try JWSVerifier(allowedAlgorithms: [algorithm]).verify(
                    "\(parts[0]).\(parts[1]).\(TestBase64URL.encode(changed))", keys: keys)
            }
        }
    }

    @Test func refusesAnRSASignatureUnderTheOtherPadding() throws {
        let rs = try TestSigner(TestKeys.rsa, alg: "RS256")
        let keys = try keySet([try rs.jwk()])
        let token = try rs.token(claims: StandardClaims.object())
        let parts = token.split(separator: ".")
        let relabelled = TestBase64URL.encode(#"{"alg":"PS256","kid":"test-key"}"#) + ".\(parts[1]).\(parts[2])"
        #expect(throws: JOSEError.badSignature) { try JWSVerifier(allowedAlgorithms: [.ps256]).verify(relabelled, keys: keys) }
    }

    // MARK: Algorithm rules (RFC 8725)

    @Test(arguments: ["none", "HS256", "HS384", "HS512"])
    func neverAcceptsNoneOrHMAC(alg: String) throws {
        let signer = try TestSigner(TestKeys.rsa)
        let keys = try keySet([try signer.jwk()])
        let header = TestBase64URL.encode(#"{"alg":"\#(alg)","kid":"test-key"}"#)
        let payload = TestBase64URL.encode(StandardClaims.object().serializedBytes())
        for signature in ["", TestBase64URL.encode([UInt8](repeating: 7, count: 32))] {
            #expect(throws: JOSEError.forbiddenAlgorithm(alg)) {
                try JWSVerifier(allowedAlgorithms: Self.everyAlgorithm).verify("\(header).\(payload).\(signature)", keys: keys)
            }
        }
    }

    /// The classic confusion attack: an HS256 token whose HMAC key is the RSA public key, in
    /// every form a confused verifier might use as the secret.
    @Test func refusesHS256SignedWithTheRSAPublicKey() throws {
        let signer = try TestSigner(TestKeys.rsa)
        let jwk = try signer.jwk()
        let keys = try keySet([jwk])
        let modulus = try #require(TestBase64URL.decode(try signer.key.publicJWKMembers()[1].1))
        let header = TestBase64URL.encode(#"{"alg":"HS256","kid":"test-key"}"#)
        let payload = TestBase64URL.encode(StandardClaims.object().serializedBytes())
        let input = Array("\(header).\(payload)".utf8)
        for secret in [modulus, Array(jwk.utf8), Array(keySetJSON([jwk]).utf8)] {
            let mac = testHMAC("HS256", key: secret, data: input)
            #expect(mac.count == 32)
            let token = "\(header).\(payload).\(TestBase64URL.encode(mac))"
            #expect(throws: JOSEError.forbiddenAlgorithm("HS256")) {
                try JWSVerifier(allowedAlgorithms: Self.everyAlgorithm).verify(token, keys: keys)
            }
            #expect(throws: JOSEError.forbiddenAlgorithm("HS256")) {
                try StandardClaims.validator(algorithms: Self.everyAlgorithm).validate(token, keys: keys, nonce: nil)
            }
        }
    }

    @Test(arguments: ["NONE", "None", "RS1", "ES256K", "Ed25519", "RS256 ", "\u{1B}[2J"])
    func refusesUnknownAlgorithms(alg: String) throws {
        let keys = try keySet([try TestSigner(TestKeys.rsa).jwk()])
        let token = "\(TestBase64URL.encode(JSONValue.object(["alg": .string(alg)]).serializedBytes())).e30.AAAA"
        do {
            _ = try JWSVerifier(allowedAlgorithms: Self.everyAlgorithm).verify(token, keys: keys)
            Issue.record("accepted \(alg)")
        } catch {
            #expect(error == .unsupportedAlgorithm(alg))
            #expect(!"\(error)".contains("\u{1B}"))
        }
    }

    @Test func refusesAlgorithmsOutsideTheAllowlist() throws {
        let signer = try TestSigner(TestKeys.p256, alg: "ES256")
        let keys = try keySet([try signer.jwk()])
        let token = try signer.token(claims: StandardClaims.object())
        #expect(throws: JOSEError.algorithmNotAllowed(.es256, allowed: [.rs256])) { try JWSVerifier().verify(token, keys: keys) }
        #expect(throws: JOSEError.algorithmNotAllowed(.es256, allowed: [.ps256, .rs256])) {
            try JWSVerifier(allowedAlgorithms: [.rs256, .ps256]).verify(token, keys: keys)
        }
        _ = try JWSVerifier(allowedAlgorithms: JWSAlgorithm.allowlist(advertised: ["ES256", "none", "HS256", "XYZ"])).verify(
            token, keys: keys)
        #expect(JWSAlgorithm.allowlist(advertised: ["ES256", "none", "HS256"]) == [.rs256, .es256])
    }

    @Test func refusesAnAlgorithmThatDoesNotFitTheNamedKey() throws {
        let rsa = try TestSigner(TestKeys.rsa, kid: "rsa")
        let ec = try TestSigner(TestKeys.p256, kid: "ec", alg: "ES256")
        let keys = try keySet([try rsa.jwk(), try ec.jwk(), try TestSigner(TestKeys.rsa, kid: "ps-only").jwk(alg: "PS256")])
        // An EC signature presented under the RSA key's kid.
        let confused = try TestSigner(TestKeys.p256, kid: "rsa", alg: "ES256").token(claims: StandardClaims.object())
        #expect(throws: JOSEError.algorithmKeyMismatch(.es256, keyID: "rsa")) {
            try JWSVerifier(allowedAlgorithms: Self.everyAlgorithm).verify(confused, keys: keys)
        }
        // RS256 under a key whose alg says PS256.
        let wrongAlg = try TestSigner(TestKeys.rsa, kid: "ps-only").token(claims: StandardClaims.object())
        #expect(throws: JOSEError.algorithmKeyMismatch(.rs256, keyID: "ps-only")) {
            try JWSVerifier(allowedAlgorithms: Self.everyAlgorithm).verify(wrongAlg, keys: keys)
        }
        // ES384 header under a P-256 key.
        let curve = try TestSigner(TestKeys.p256, kid: "ec", alg: "ES256").token(payload: [1], alg: "ES384")
        #expect(throws: JOSEError.algorithmKeyMismatch(.es384, keyID: "ec")) {
            try JWSVerifier(allowedAlgorithms: Self.everyAlgorithm).verify(curve, keys: keys)
        }
    }

    // MARK: Keys never come from the token

    @Test func neverUsesAnEmbeddedJWK() throws {
        let provider = try TestSigner(TestKeys.rsa, kid: "provider")
        let keys = try keySet([try provider.jwk()])
        let attacker = try TestSigner(TestKeys.rsaOther, kid: "provider")
        let embedded = try JSONValue(parsing: try attacker.jwk())
        let forged = try attacker.token(claims: StandardClaims.object(), header: [("jwk", embedded)])
        #expect(throws: JOSEError.badSignature) { try JWSVerifier().verify(forged, keys: keys) }
        // Without a kid the provider's keys are still the only candidates.
        let noKid = try TestSigner(TestKeys.rsaOther, kid: nil).token(claims: StandardClaims.object(), header: [("jwk", embedded)])
        #expect(throws: JOSEError.badSignature) { try JWSVerifier().verify(noKid, keys: keys) }
        // Under the attacker's own kid: unknown, never fetched, never taken from the header.
        let ownKid = try TestSigner(TestKeys.rsaOther, kid: "attacker").token(claims: StandardClaims.object(), header: [("jwk", embedded)])
        #expect(throws: JOSEError.unknownKeyID("attacker")) { try JWSVerifier().verify(ownKid, keys: keys) }
    }

    @Test(arguments: ["jku", "x5u"])
    func neverFollowsAKeyURL(member: String) throws {
        let provider = try TestSigner(TestKeys.rsa, kid: "provider")
        let keys = try keySet([try provider.jwk()])
        let url = JSONValue.string("https://attacker.example/keys.json")
        let forged = try TestSigner(TestKeys.rsaOther, kid: "provider").token(claims: StandardClaims.object(), header: [(member, url)])
        #expect(throws: JOSEError.badSignature) { try JWSVerifier().verify(forged, keys: keys) }
        let elsewhere = try TestSigner(TestKeys.rsaOther, kid: "attacker-kid").token(
            claims: StandardClaims.object(), header: [(member, url)])
        #expect(throws: JOSEError.unknownKeyID("attacker-kid")) { try JWSVerifier().verify(elsewhere, keys: keys) }
        // The provider's own token with such a header still verifies: the member is ignored, not obeyed.
        let genuine = try provider.token(claims: StandardClaims.object(), header: [(member, url)])
        #expect(try JWSVerifier().verify(genuine, keys: keys).key.keyID == "provider")
    }

    @Test func neverUsesAnEmbeddedCertificate() throws {
        let keys = try keySet([try TestSigner(TestKeys.rsa, kid: "provider").jwk()])
        let forged = try TestSigner(TestKeys.rsaOther, kid: "provider").token(
            claims: StandardClaims.object(), header: [("x5c", ["MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA"])])
        #expect(throws: JOSEError.badSignature) { try JWSVerifier().verify(forged, keys: keys) }
    }

    // MARK: Key selection

    @Test func withoutAKidOneFittingKeyIsUsed() throws {
        let signer = try TestSigner(TestKeys.rsa, kid: nil)
        let keys = try keySet([try signer.jwk(), try TestSigner(TestKeys.p256, kid: "ec").jwk()])
        let token = try signer.token(claims: StandardClaims.object())
        #expect(try JWSVerifier().verify(token, keys: keys).key.keyType == .rsa)
    }

    @Test func withoutAKidEveryFittingKeyIsTried() throws {
        let first = try TestSigner(TestKeys.rsaOther, kid: "a")
        let second = try TestSigner(TestKeys.rsa, kid: "b")
        let keys = try keySet([try first.jwk(), try second.jwk(), try TestSigner(TestKeys.p256, kid: "c").jwk()])
        let token = try TestSigner(TestKeys.rsa, kid: nil).token(claims: StandardClaims.object())
        #expect(try JWSVerifier().verify(token, keys: keys).key.keyID == "b")
        let stranger = try TestSigner(TestKeys.rsa1024, kid: nil).token(claims: StandardClaims.object())
        #expect(throws: JOSEError.badSignature) { try JWSVerifier().verify(stranger, keys: keys) }
        let noneFits = try TestSigner(TestKeys.ed25519, kid: nil, alg: "EdDSA").token(claims: StandardClaims.object())
        #expect(throws: JOSEError.noSuitableKey(.edDSA)) { try JWSVerifier(allowedAlgorithms: [.edDSA]).verify(noneFits, keys: keys) }
    }

    /// Key rotation: the token names a kid the (stale) set does not have. That is its own
    /// error, and no other key is tried — not even one that would verify the signature.
    @Test func anUnknownKidNeverFallsBackToAnotherKey() throws {
        let keys = try keySet([try TestSigner(TestKeys.rsa, kid: "2023-key").jwk()])
        let token = try TestSigner(TestKeys.rsa, kid: "2024-key").token(claims: StandardClaims.object())
        do {
            _ = try JWSVerifier().verify(token, keys: keys)
            Issue.record("accepted")
        } catch {
            #expect(error == .unknownKeyID("2024-key"))
            #expect(error.isUnknownKeyID)
            #expect(error.category == .signatureOrKey)
        }
        // After a refetch the set has the new key.
        let refreshed = try keySet([try TestSigner(TestKeys.rsa, kid: "2024-key").jwk()])
        #expect(try JWSVerifier().verify(token, keys: refreshed).key.keyID == "2024-key")
    }

    @Test func aKidNamingARefusedKeySaysWhy() throws {
        let keys = try keySet([try TestSigner(TestKeys.rsa1024, kid: "weak").jwk()])
        let token = try TestSigner(TestKeys.rsa1024, kid: "weak").token(claims: StandardClaims.object())
        #expect(throws: JOSEError.keyNotUsable(keyID: "weak", reason: .rsaModulusTooSmall(bits: 1024))) {
            try JWSVerifier().verify(token, keys: keys)
        }
    }

    // MARK: ECDSA range checks

    @Test func refusesOutOfRangeECDSAValues() throws {
        let signer = try TestSigner(TestKeys.p256, alg: "ES256")
        let keys = try keySet([try signer.jwk()])
        let token = try signer.token(claims: StandardClaims.object())
        let parts = token.split(separator: ".")
        let order = hexBytes("ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551")
        let zero = [UInt8](repeating: 0, count: 32)
        let one = [UInt8](repeating: 0, count: 31) + [1]
        for (r, s) in [(zero, zero), (zero, one), (one, zero), (order, one), (one, order), ([UInt8](repeating: 0xFF, count: 32), one)] {
            let forged = "\(parts[0]).\(parts[1]).\(TestBase64URL.encode(r + s))"
            #expect(throws: JOSEError.badSignature) { try JWSVerifier(allowedAlgorithms: [.es256]).verify(forged, keys: keys) }
        }
        // A DER signature (what OpenSSL produces) is not the JWS form and is refused.
        let der = [0x30, 0x06, 0x02, 0x01, 0x01, 0x02, 0x01, 0x01] as [UInt8]
        #expect(throws: JOSEError.badSignature) {
            try JWSVerifier(allowedAlgorithms: [.es256]).verify("\(parts[0]).\(parts[1]).\(TestBase64URL.encode(der))", keys: keys)
        }
    }

    // MARK: Threads

    @Test func verifiesFromManyTasksAtOnce() async throws {
        let rsa = try TestSigner(TestKeys.rsa)
        let ed = try TestSigner(TestKeys.ed25519, kid: "ed", alg: "EdDSA")
        let keys = try keySet([try rsa.jwk(), try ed.jwk()])
        let tokens = [try rsa.token(claims: StandardClaims.object()), try ed.token(claims: StandardClaims.object())]
        let verifier = JWSVerifier(allowedAlgorithms: [.rs256, .edDSA])
        let failures = await withTaskGroup(of: Int.self) { group in
            for task in 0..<16 {
                group.addTask {
                    var failed = 0
                    for round in 0..<50 where (try? verifier.verify(tokens[(task + round) % 2], keys: keys)) == nil { failed += 1 }
                    return failed
                }
            }
            return await group.reduce(0, +)
        }
        #expect(failures == 0)
    }

    /// A key set that repeats a `kid` for two keys of the token's algorithm: refused, whichever
    /// of the two signed, never "whichever verifies". Two keys under one `kid` that
    /// fit different algorithms stay usable: the algorithm picks exactly one.
    @Test func refusesAKeyIDThatNamesTwoKeysOfTheAlgorithm() throws {
        let first = try TestSigner(TestKeys.rsa, kid: "shared")
        let second = try TestSigner(TestKeys.rsaOther, kid: "shared")
        let keys = try keySet([try first.jwk(), try second.jwk()])
        for signer in [first, second] {
            let token = try signer.token(claims: StandardClaims.object())
            #expect(throws: JOSEError.ambiguousKeyID("shared")) { try JWSVerifier().verify(token, keys: keys) }
        }
        // Each key alone verifies its own token: the refusal is about the set, not the keys.
        let alone = try first.token(claims: StandardClaims.object())
        #expect(try JWSVerifier().verify(alone, keys: try keySet([try first.jwk()])).key.keyID == "shared")
        #expect(JOSEError.ambiguousKeyID("shared").category == .signatureOrKey)
    }

    /// `zip` is a JWE parameter (RFC 7516 §4.1.3); a JWS that carries it is refused as malformed,
    /// even when its signature is good.
    @Test(arguments: [JSONValue.string("DEF"), .string("none"), .bool(false)])
    func refusesAZipHeader(value: JSONValue) throws {
        let provider = try TestSigner(TestKeys.rsa, kid: "provider")
        let keys = try keySet([try provider.jwk()])
        let token = try provider.token(claims: StandardClaims.object(), header: [("zip", value)])
        #expect {
            try JWSVerifier().verify(token, keys: keys)
        } throws: { error in
            guard case .malformedToken(let reason) = error as? JOSEError else { return false }
            return reason.contains("zip")
        }
    }
}
