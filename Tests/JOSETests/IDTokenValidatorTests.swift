import Foundation
import JOSE
import TestSupport
import Testing

@Suite struct IDTokenValidatorTests {
    let signer: TestSigner
    let keys: JWKSet

    init() throws {
        signer = try TestSigner(TestKeys.rsa)
        keys = try keySet([try signer.jwk()])
    }

    func validate(
        _ changes: [(String, JSONValue?)], nonce: String? = StandardClaims.nonce,
        validator: IDTokenValidator = StandardClaims.validator()
    ) throws(JOSEError) -> ValidatedIDToken {
        let token: String
        do {
            token = try signer.token(claims: StandardClaims.object(changes))
        } catch {
            throw .cryptoFailure("test signing failed: \(error)")
        }
        return try validator.validate(token, keys: keys, nonce: nonce)
    }

    @Test func acceptsAValidToken() throws {
        let validated = try validate([])
        #expect(validated.claims.subject == "248289761001")
        #expect(validated.claims.issuer == StandardClaims.issuer)
        #expect(validated.claims.audience == [StandardClaims.clientID])
        #expect(validated.claims.nonce == StandardClaims.nonce)
        #expect(validated.claims.expiration == Date(timeIntervalSince1970: Double(StandardClaims.now + 3600)))
        #expect(validated.algorithm == .rs256)
        #expect(validated.key.keyID == "test-key")
        #expect(validated.header.keyID == "test-key")
    }

    @Test func refusesAnExpiredToken() {
        #expect(throws: JOSEError.expired(bySeconds: 600)) { try validate([("exp", .number(JSONNumber(StandardClaims.now - 600)))]) }
        // Within the leeway (120 s by default) it still passes; at the edge it does not.
        #expect(throws: Never.self) { try validate([("exp", .number(JSONNumber(StandardClaims.now - 119)))]) }
        #expect(throws: JOSEError.expired(bySeconds: 120)) { try validate([("exp", .number(JSONNumber(StandardClaims.now - 120)))]) }
        var strict = StandardClaims.validator()
        strict.leeway = .zero
        #expect(throws: JOSEError.expired(bySeconds: 0)) {
            try validate([("exp", .number(JSONNumber(StandardClaims.now)))], validator: strict)
        }
    }

    @Test func refusesATokenNotYetValid() {
        #expect(throws: JOSEError.notYetValid(bySeconds: 300)) { try validate([("nbf", .number(JSONNumber(StandardClaims.now + 300)))]) }
        #expect(throws: Never.self) { try validate([("nbf", .number(JSONNumber(StandardClaims.now + 100)))]) }
    }

    @Test func refusesATokenIssuedInTheFuture() {
        #expect(throws: JOSEError.issuedInFuture(bySeconds: 3000)) {
            try validate([("iat", .number(JSONNumber(StandardClaims.now + 3000)))])
        }
    }

    @Test(arguments: ["iss", "sub", "aud", "exp", "iat"])
    func refusesATokenMissingARequiredClaim(claim: String) {
        #expect(throws: JOSEError.missingClaim(claim)) { try validate([(claim, nil)]) }
    }

    @Test func refusesTheWrongIssuer() {
        #expect(throws: JOSEError.wrongIssuer(expected: StandardClaims.issuer)) { try validate([("iss", "https://evil.example.com")]) }
        #expect(throws: JOSEError.wrongIssuer(expected: StandardClaims.issuer)) { try validate([("iss", "https://issuer.example.com/")]) }
    }

    @Test func refusesTheWrongAudience() {
        #expect(throws: JOSEError.wrongAudience(expected: StandardClaims.clientID)) { try validate([("aud", "other-client")]) }
        #expect(throws: JOSEError.wrongAudience(expected: StandardClaims.clientID)) {
            try validate([("aud", ["a", "b"]), ("azp", "client-1")])
        }
        #expect(throws: JOSEError.invalidClaim("aud holds a value that is not a string")) { try validate([("aud", ["client-1", 5])]) }
        #expect(throws: JOSEError.invalidClaim("aud is not a string or an array of strings")) { try validate([("aud", 5)]) }
    }

    @Test func checksTheAuthorizedParty() throws {
        // Several audiences: azp is required and must be the client.
        #expect(throws: JOSEError.missingClaim("azp")) { try validate([("aud", ["client-1", "api"])]) }
        #expect(throws: JOSEError.authorizedPartyMismatch(expected: "client-1")) {
            try validate([("aud", ["client-1", "api"]), ("azp", "api")])
        }
        #expect(try validate([("aud", ["client-1", "api"]), ("azp", "client-1")]).claims.audience == ["client-1", "api"])
        // One audience: azp, when present, must still be the client.
        #expect(throws: JOSEError.authorizedPartyMismatch(expected: "client-1")) { try validate([("azp", "someone-else")]) }
    }

    @Test func checksTheNonce() {
        #expect(throws: JOSEError.nonceMismatch) { try validate([("nonce", "replayed-nonce")]) }
        #expect(throws: JOSEError.missingClaim("nonce")) { try validate([("nonce", nil)]) }
        #expect(throws: JOSEError.invalidClaim("nonce is not a string")) { try validate([("nonce", 7)]) }
        // No nonce sent: the token's nonce is not checked.
        #expect(throws: Never.self) { try validate([("nonce", "anything")], nonce: nil) }
    }

    @Test func refusesClaimsOfTheWrongType() {
        #expect(throws: JOSEError.invalidClaim("exp is not a NumericDate")) { try validate([("exp", "tomorrow")]) }
        #expect(throws: JOSEError.invalidClaim("exp is not a NumericDate")) { try validate([("exp", .number(JSONNumber(text: "1e999")!))]) }
        #expect(throws: JOSEError.invalidClaim("iss is not a string")) { try validate([("iss", ["https://issuer.example.com"])]) }
        #expect(throws: JOSEError.invalidClaim("sub is empty")) { try validate([("sub", "")]) }
        #expect(throws: JOSEError.invalidClaim("azp is not a string")) { try validate([("azp", 1)]) }
    }

    @Test func acceptsFractionalNumericDates() throws {
        _ = try validate([("exp", .number(JSONNumber(text: "1700003600.5")!)), ("iat", .number(JSONNumber(text: "1.69999999e9")!))])
    }

    /// A claim named twice could be read differently by two parsers; the token is refused.
    @Test func refusesDuplicateClaims() throws {
        let payload = Array(
            #"{"iss":"https://issuer.example.com","sub":"a","aud":"client-1","exp":1700003600,"iat":1699999990,"sub":"admin"}"#.utf8)
        let token = try signer.token(payload: payload)
        do {
            _ = try StandardClaims.validator().validate(token, keys: keys, nonce: nil)
            Issue.record("accepted")
        } catch {
            #expect(error == .malformedToken("the payload is not valid JSON: duplicate member name ‘sub’ at byte 97"))
            #expect(error.category == .malformed)
        }
    }

    @Test func refusesAPayloadThatIsNotAnObject() throws {
        let token = try signer.token(payload: Array("[1,2]".utf8))
        #expect(throws: JOSEError.malformedToken("the payload is not a JSON object")) {
            try StandardClaims.validator().validate(token, keys: keys, nonce: nil)
        }
    }

    @Test func checksTheSignatureBeforeTheClaims() throws {
        let forged = try TestSigner(TestKeys.rsaOther).token(claims: StandardClaims.object([("exp", 1)]))
        #expect(throws: JOSEError.badSignature) { try StandardClaims.validator().validate(forged, keys: keys, nonce: nil) }
    }

    @Test func theClockIsInjected() {
        var later = StandardClaims.validator()
        later.clock = { Date(timeIntervalSince1970: Double(StandardClaims.now + 7200)) }
        #expect(throws: JOSEError.expired(bySeconds: 3600)) { try validate([], validator: later) }
    }

    @Test func signatureOnlySkipsTheClaims() throws {
        let token = try signer.token(claims: ["exp": 1])
        let verified = try StandardClaims.validator().verifySignature(try CompactJWS(parsing: token), keys: keys)
        #expect(verified.payload == Array(#"{"exp":1}"#.utf8))
    }

    @Test func errorsNeverEchoClaimValues() {
        let secret = "s3cr3t-value-from-the-token"
        let cases: [[(String, JSONValue?)]] = [
            [("iss", .string(secret))], [("aud", .string(secret))], [("nonce", .string(secret))], [("azp", .string(secret))],
            [("sub", .array([.string(secret)]))],
        ]
        for changes in cases {
            do {
                _ = try validate(changes)
                Issue.record("accepted \(changes)")
            } catch {
                #expect(!"\(error)".contains(secret))
                #expect(error.category == .claims)
            }
        }
    }

    @Test func everyErrorHasAnActionableDescription() {
        let errors: [JOSEError] = [
            .expired(bySeconds: 5), .notYetValid(bySeconds: 5), .issuedInFuture(bySeconds: 5), .wrongAudience(expected: "c"),
            .wrongIssuer(expected: "i"), .nonceMismatch, .missingClaim("sub"), .badSignature, .unknownKeyID("k"),
            .forbiddenAlgorithm("none"), .algorithmNotAllowed(.es256, allowed: [.rs256]), .invalidTenantID,
        ]
        for error in errors { #expect("\(error)".count > 30, "\(error)") }
        #expect("\(JOSEError.expired(bySeconds: 5))" == "the token expired 5 s ago; sign in again, or check this machine's clock")
    }
}

/// A `tid` that could carry terminal controls or reshape a URL is never kept.
@Suite struct TenantIDClaimTests {
    @Test(arguments: [
        ("30aa0e58-719c-44f0-b5bb-e131f1f68ab3", true), ("contoso.onmicrosoft.com", true), ("\u{1B}]52;c;eA==\u{07}", false),
        ("a/b", false), ("\u{202E}abc", false), ("..", false), ("", false), (String(repeating: "a", count: 65), false),
    ])
    func onlyAPlausibleTenantIDIsKept(tid: String, kept: Bool) throws {
        let payload = JSONValue.object(["iss": "https://i", "tid": .string(tid)]).serializedBytes()
        let claims = try JWTClaims(payload: payload)
        #expect(claims.tenantID == (kept ? tid : nil))
    }
}
