import Testing
@testable import AuthKit

@Suite("AuthorizationCallback and CallbackExpectation")
struct AuthorizationCallbackTests {
    let expectation = CallbackExpectation(state: "state-123", issuer: "https://idp.example", issuerRequired: false)

    func verdict(_ query: String, _ expectation: CallbackExpectation? = nil) throws -> CallbackExpectation.Verdict {
        (expectation ?? self.expectation).evaluate(try AuthorizationCallback(query: query))
    }

    @Test("the genuine callback is accepted and yields its code")
    func accepted() throws {
        guard case .accepted(let grant) = try verdict("code=abc&state=state-123&iss=https%3A%2F%2Fidp.example") else {
            Issue.record("not accepted"); return
        }
        #expect(grant.code == "abc")
        #expect(grant.issuer == "https://idp.example")
        #expect(!"\(grant)".contains("abc"))
    }

    @Test("missing or wrong state is ignored, not fatal")
    func wrongState() throws {
        guard case .ignored(.missingState) = try verdict("code=abc") else { Issue.record("missing state"); return }
        guard case .ignored(.stateMismatch) = try verdict("code=abc&state=state-124") else { Issue.record("wrong state"); return }
        guard case .ignored(.stateMismatch) = try verdict("code=abc&state=state-12") else { Issue.record("prefix"); return }
        // An error with a wrong state is someone else's problem too.
        guard case .ignored(.stateMismatch) = try verdict("error=access_denied&state=other") else { Issue.record("error"); return }
    }

    @Test("a provider error with the right state ends the sign-in, its text cleaned")
    func providerError() throws {
        let query = "error=access_denied&error_description=User%20said%20no%1B%5B31m&state=state-123"
        guard case .failed(.providerError(let code, let description, _)) = try verdict(query) else {
            Issue.record("not failed"); return
        }
        #expect(code == "access_denied")
        #expect(description == "User said no [31m")
    }

    @Test("a wrong iss fails the sign-in (mix-up defence, RFC 9207)")
    func issuerMismatch() throws {
        guard case .failed(.issuerMismatch) = try verdict("code=abc&state=state-123&iss=https%3A%2F%2Fevil.example") else {
            Issue.record("accepted a wrong iss"); return
        }
        // iss is checked before error responses are believed.
        guard case .failed(.issuerMismatch) = try verdict("error=x&state=state-123&iss=https%3A%2F%2Fevil.example") else {
            Issue.record("error before iss"); return
        }
    }

    @Test("iss is required when the provider advertises it")
    func issuerRequired() throws {
        let strict = CallbackExpectation(state: "s", issuer: "https://idp.example", issuerRequired: true)
        guard case .failed(.missingIssuer) = try verdict("code=abc&state=s", strict) else { Issue.record("no iss accepted"); return }
        guard case .accepted = try verdict("code=abc&state=s&iss=https%3A%2F%2Fidp.example", strict) else {
            Issue.record("good iss refused"); return
        }
    }

    @Test("template issuers match one safe tenant segment")
    func templateIssuer() {
        let template = "https://login.microsoftonline.com/{tenantid}/v2.0"
        #expect(IssuerMatcher.matches("https://login.microsoftonline.com/9188040d-6c67-4c5b-b112-36a304b66dad/v2.0", expected: template))
        #expect(!IssuerMatcher.matches("https://login.microsoftonline.com//v2.0", expected: template))
        #expect(!IssuerMatcher.matches("https://login.microsoftonline.com/a/b/v2.0", expected: template))
        #expect(!IssuerMatcher.matches("https://login.microsoftonline.com/../v2.0", expected: template))
        #expect(!IssuerMatcher.matches("https://evil.example/x/v2.0", expected: template))
        #expect(IssuerMatcher.matches("https://idp.example", expected: "https://idp.example"))
        #expect(!IssuerMatcher.matches("https://idp.example/", expected: "https://idp.example"))
    }

    @Test("no code and no error is malformed")
    func noCode() throws {
        guard case .failed(.malformedCallback) = try verdict("state=state-123") else { Issue.record("accepted"); return }
    }

    @Test("repeated parameters and bad encoding are refused")
    func duplicates() {
        #expect(throws: AuthorizationError.duplicateParameter("code")) {
            _ = try AuthorizationCallback(query: "code=a&code=b&state=s")
        }
        #expect(throws: AuthorizationError.self) { _ = try AuthorizationCallback(query: "code=%zz") }
    }

    @Test(
        "pasted URLs: whole address, query only, quoted, with fragment",
        arguments: [
            "http://127.0.0.1:43123/callback?code=abc&state=state-123",
            "  'http://127.0.0.1:43123/callback?code=abc&state=state-123'\n",
            "?code=abc&state=state-123",
            "code=abc&state=state-123",
            "http://127.0.0.1:43123/callback?code=abc&state=state-123#ignored",
        ])
    func pasted(_ text: String) throws {
        let callback = try AuthorizationCallback(pasted: text)
        guard case .accepted(let grant) = expectation.evaluate(callback) else { Issue.record("not accepted"); return }
        #expect(grant.code == "abc")
    }

    @Test(
        "pasted text that is not a callback is refused with a reason",
        arguments: [
            "", "   ", "hello", "http://127.0.0.1:43123/callback", "not a url://",
        ])
    func pastedGarbage(_ text: String) {
        #expect(throws: AuthorizationError.self) { _ = try AuthorizationCallback(pasted: text) }
    }

    @Test("descriptions name parameters, not values")
    func description() throws {
        let callback = try AuthorizationCallback(query: "code=supersecret&state=s")
        #expect(!"\(callback)".contains("supersecret"))
    }
}
