import Foundation
import JOSE
import TestSupport
import Testing

/// id_tokens that Microsoft, Google and Apple really signed (Fixtures/real-world/README.md),
/// validated against the key sets recorded with them, the clock pinned inside their lifetime.
@Suite struct RealWorldTokenTests {
    struct Recorded {
        let token: String
        let keys: JWKSet
        let issuer: String
        let audience: String
        let nonce: String?
        let issuedAt: Int64
        let expiresAt: Int64
        let kid: String

        init(_ file: String) throws {
            let json = try fixtureJSON("real-world/\(file)")
            token = try #require(json["token"]?.stringValue)
            keys = try JWKSet(json: try #require(json["jwks"]))
            issuer = try #require(json["issuer"]?.stringValue)
            audience = try #require(json["audience"]?.stringValue)
            nonce = json["nonce"]?.stringValue
            issuedAt = try #require(json["iat"]?.int64Value)
            expiresAt = try #require(json["exp"]?.int64Value)
            kid = try #require(json["kid"]?.stringValue)
        }

        func validator(_ issuer: IssuerRule, at time: Int64) -> IDTokenValidator {
            IDTokenValidator(issuer: issuer, clientID: audience, clock: { Date(timeIntervalSince1970: Double(time)) })
        }
    }

    @Test(arguments: ["apple-1.json", "google-1.json", "google-2.json", "microsoft-1.json", "microsoft-2.json", "microsoft-3.json"])
    func validatesInsideItsLifetime(file: String) throws {
        let recorded = try Recorded(file)
        #expect(recorded.keys.skipped.isEmpty)
        let validated = try recorded.validator(.exact(recorded.issuer), at: recorded.issuedAt + 60)
            .validate(recorded.token, keys: recorded.keys, nonce: recorded.nonce)
        #expect(validated.key.keyID == recorded.kid)
        #expect(validated.claims.issuer == recorded.issuer)
        #expect(validated.algorithm == .rs256)

        // After its lifetime (and the leeway) it is refused, as are a wrong client and nonce.
        #expect(throws: JOSEError.expired(bySeconds: 600)) {
            try recorded.validator(.exact(recorded.issuer), at: recorded.expiresAt + 600).validate(
                recorded.token, keys: recorded.keys, nonce: recorded.nonce)
        }
        #expect(throws: JOSEError.wrongAudience(expected: "another-client")) {
            try IDTokenValidator(
                issuer: .exact(recorded.issuer), clientID: "another-client",
                clock: { Date(timeIntervalSince1970: Double(recorded.issuedAt)) }
            )
            .validate(recorded.token, keys: recorded.keys, nonce: recorded.nonce)
        }
        #expect(throws: recorded.nonce == nil ? JOSEError.missingClaim("nonce") : JOSEError.nonceMismatch) {
            try recorded.validator(.exact(recorded.issuer), at: recorded.issuedAt).validate(
                recorded.token, keys: recorded.keys, nonce: "not-the-nonce")
        }
        // The key set without the token's key: a rotation the caller must refetch for.
        let others = JWKSet(keys: recorded.keys.keys.filter { $0.keyID != recorded.kid })
        do {
            _ = try recorded.validator(.exact(recorded.issuer), at: recorded.issuedAt).validate(
                recorded.token, keys: others, nonce: recorded.nonce)
            Issue.record("accepted without its key")
        } catch {
            #expect(error.isUnknownKeyID)
        }
    }

    @Test func googleIssuerWithoutSchemeIsAnExactMatch() throws {
        let recorded = try Recorded("google-2.json")
        #expect(recorded.issuer == "accounts.google.com")
        #expect(throws: JOSEError.wrongIssuer(expected: "https://accounts.google.com")) {
            try recorded.validator(.exact("https://accounts.google.com"), at: recorded.issuedAt).validate(
                recorded.token, keys: recorded.keys, nonce: nil)
        }
    }

    @Test func microsoftV2ThroughTheTenantTemplate() throws {
        let recorded = try Recorded("microsoft-1.json")
        let rule = IssuerRule(configured: "https://login.microsoftonline.com/{tenantid}/v2.0")
        let validated = try recorded.validator(rule, at: recorded.issuedAt + 60).validate(recorded.token, keys: recorded.keys, nonce: nil)
        #expect(validated.claims.tenantID == "30aa0e58-719c-44f0-b5bb-e131f1f68ab3")
        // The same token against the v1 template is refused.
        #expect(throws: JOSEError.wrongIssuer(expected: "https://sts.windows.net/{tenantid}/")) {
            try recorded.validator(.template("https://sts.windows.net/{tenantid}/"), at: recorded.issuedAt).validate(
                recorded.token, keys: recorded.keys, nonce: nil)
        }
    }

    @Test func microsoftV1ThroughTheTenantTemplate() throws {
        let recorded = try Recorded("microsoft-3.json")
        #expect(recorded.issuer == "https://sts.windows.net/30aa0e58-719c-44f0-b5bb-e131f1f68ab3/")
        _ = try recorded.validator(.template("https://sts.windows.net/{tenantid}/"), at: recorded.issuedAt + 60)
            .validate(recorded.token, keys: recorded.keys, nonce: nil)
    }

    @Test func microsoftPersonalAccountThroughTheTenantTemplate() throws {
        let recorded = try Recorded("microsoft-2.json")
        _ = try recorded.validator(.template("https://login.microsoftonline.com/{tenantid}/v2.0"), at: recorded.issuedAt + 60)
            .validate(recorded.token, keys: recorded.keys, nonce: recorded.nonce)
    }
}
