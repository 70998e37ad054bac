import JOSE
import Testing

@Suite struct IssuerRuleTests {
    static let template = "https://login.microsoftonline.com/{tenantid}/v2.0"
    static let tenant = "72f988bf-86f1-41af-91ab-2d7cd011db47"

    @Test func buildsTheRuleFromTheConfiguredIssuer() {
        #expect(IssuerRule(configured: Self.template) == .template(Self.template))
        #expect(IssuerRule(configured: "https://accounts.google.com") == .exact("https://accounts.google.com"))
        #expect("\(IssuerRule.template(Self.template))" == Self.template)
    }

    func validate(iss: String, tid: JSONValue?) throws(JOSEError) {
        let signer: TestSigner
        let token: String
        let keys: JWKSet
        do {
            signer = try TestSigner(TestKeys.rsa)
            token = try signer.token(claims: StandardClaims.object([("iss", .string(iss)), ("tid", tid)]))
            keys = try keySet([try signer.jwk()])
        } catch {
            throw .cryptoFailure("test setup failed: \(error)")
        }
        _ = try StandardClaims.validator(issuer: .template(Self.template)).validate(token, keys: keys, nonce: nil)
    }

    @Test func fillsTheTemplateFromTid() throws {
        try validate(iss: "https://login.microsoftonline.com/\(Self.tenant)/v2.0", tid: .string(Self.tenant))
    }

    @Test func refusesAnIssuerOfAnotherTenant() {
        #expect(throws: JOSEError.wrongIssuer(expected: Self.template)) {
            try validate(iss: "https://login.microsoftonline.com/\(Self.tenant)/v2.0", tid: "9188040d-6c67-4c5b-b112-36a304b66dad")
        }
        #expect(throws: JOSEError.wrongIssuer(expected: Self.template)) {
            try validate(iss: "https://evil.example.com/\(Self.tenant)/v2.0", tid: .string(Self.tenant))
        }
        // The template itself is not a valid issuer.
        #expect(throws: JOSEError.wrongIssuer(expected: Self.template)) { try validate(iss: Self.template, tid: .string(Self.tenant)) }
    }

    @Test(
        arguments: [
            nil, "", "a/b", "x?y", "x#y", "{tenantid}", "%2F", "evil.example.com/..", "a b", "ü", "..", "a@b", "a:b",
            String(repeating: "a", count: 65),
        ] as [String?])
    func refusesAnUnsafeOrMissingTid(tid: String?) {
        // An attacker-chosen tid must not be able to reshape the expected issuer into its own.
        let iss = "https://login.microsoftonline.com/\(tid ?? "")/v2.0"
        #expect(throws: JOSEError.invalidTenantID) { try validate(iss: iss, tid: tid.map(JSONValue.string)) }
    }

    @Test func refusesATidThatIsNotAString() {
        #expect(throws: JOSEError.invalidTenantID) { try validate(iss: "https://login.microsoftonline.com/5/v2.0", tid: 5) }
    }
}
