import Foundation
import JOSE
import TestSupport
import Testing
@testable import AuthKit

@Suite struct TokenNarrowingTests {
    static let key = try? TestSigningKey.generate(.ec(curve: "P-256"))

    static func jwt(_ claims: String) throws -> String {
        try #require(key).token(header: #"{"alg":"ES256","typ":"at+jwt"}"#, payload: claims, alg: "ES256")
    }

    @Test func keysAreThoseScopeOnlyTokensAlwaysHad() {
        #expect(TokenNarrowing(scopes: ["b", "a", "a"], resources: []).cacheKey == "a b")
        #expect(TokenNarrowing(scopes: nil, resources: ["https://z", "https://a"]).cacheKey == "resource=https://a resource=https://z")
        #expect(TokenNarrowing(scopes: ["x"], resources: ["https://r"]).cacheKey == "x resource=https://r")
        #expect(TokenNarrowing(scopes: [], resources: []).isNone)
        // Exactly the granted scopes and no resource: the sign-in's own token.
        #expect(TokenNarrowing(scopes: ["openid", "email"], resources: [], granted: ["email", "openid"]).isNone)
        #expect(!TokenNarrowing(scopes: ["openid"], resources: [], granted: ["email", "openid"]).isNone)
    }

    @Test func fewerScopesMustComeBackFewer() throws {
        let narrowing = TokenNarrowing(scopes: ["openid"], resources: [])
        let grant = ["openid", "email", "profile"]
        #expect(narrowing.problem(accessToken: "opaque", scopes: ["openid"], grant: grant) == nil)
        #expect(narrowing.problem(accessToken: "opaque", scopes: nil, grant: grant) == nil)  // RFC 6749 §5.1: as asked
        let wider = try #require(narrowing.problem(accessToken: "opaque", scopes: grant, grant: grant))
        #expect(wider.contains("does not narrow scopes") && wider.contains("email profile"))
        // A JWT's own scope claim counts when the answer says none.
        #expect(narrowing.problem(accessToken: try Self.jwt(#"{"scope":"openid email"}"#), scopes: nil, grant: grant) != nil)
        // An answer that names fewer scopes than its token carries is judged by the token too.
        #expect(narrowing.problem(accessToken: try Self.jwt(#"{"scope":"openid email"}"#), scopes: ["openid"], grant: grant) != nil)
        #expect(narrowing.problem(accessToken: try Self.jwt(#"{"scope":"openid"}"#), scopes: ["openid"], grant: grant) == nil)
        // Other scopes than the grant's (a per-API token) are not a narrowing: not checked.
        #expect(TokenNarrowing(scopes: ["api://x/.default"], resources: []).problem(accessToken: "o", scopes: ["y"], grant: grant) == nil)
    }

    @Test func aResourceTokenMustNameOnlyThatAudience() throws {
        let narrowing = TokenNarrowing(scopes: nil, resources: ["https://api.example/"])
        #expect(narrowing.problem(accessToken: try Self.jwt(#"{"aud":"https://api.example/"}"#), scopes: nil, grant: []) == nil)
        #expect(narrowing.problem(accessToken: try Self.jwt(#"{"aud":["https://api.example/"]}"#), scopes: nil, grant: []) == nil)
        let ignored = try #require(narrowing.problem(accessToken: try Self.jwt(#"{"aud":"client-id"}"#), scopes: nil, grant: []))
        #expect(ignored.contains("ignored the resource") && ignored.contains("client-id"))
        #expect(
            narrowing.problem(accessToken: try Self.jwt(#"{"aud":["https://api.example/","https://other/"]}"#), scopes: nil, grant: [])
                != nil)
        #expect(
            narrowing.problem(accessToken: try Self.jwt(#"{"sub":"x"}"#), scopes: nil, grant: [])?.contains("names no audience") == true)
        #expect(narrowing.problem(accessToken: "opaque-token", scopes: nil, grant: [])?.contains("does not say its audience") == true)
    }
}
