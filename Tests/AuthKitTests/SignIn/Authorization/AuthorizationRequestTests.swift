import Foundation
import Testing
@testable import AuthKit

@Suite("AuthorizationRequest")
struct AuthorizationRequestTests {
    let endpoint = URL(string: "https://login.example.com/oauth2/v2.0/authorize")!

    func parameters(of url: URL) throws -> [String: String] {
        let query = try #require(url.query)
        let fields = try #require(FormEncoding.decode(query))
        return Dictionary(fields.map { ($0.name, $0.value) }, uniquingKeysWith: { first, _ in first })
    }

    @Test("the URL carries code flow, PKCE S256, state, nonce and the redirect exactly")
    func urlParameters() throws {
        let request = try AuthorizationRequest(
            authorizationEndpoint: endpoint, clientID: "client-1", redirectURI: "http://127.0.0.1:5555/callback",
            scopes: ["openid", "offline_access", "User.Read"], loginHint: "ada@example.com", prompt: "select_account",
            domainHint: "example.com")
        let query = try parameters(of: request.url)
        #expect(query["response_type"] == "code")
        #expect(query["client_id"] == "client-1")
        #expect(query["redirect_uri"] == "http://127.0.0.1:5555/callback")
        #expect(query["scope"] == "openid offline_access User.Read")
        #expect(query["state"] == request.state)
        #expect(query["nonce"] == request.nonce)
        #expect(query["code_challenge"] == request.verifier.challenge)
        #expect(query["code_challenge_method"] == "S256")
        #expect(query["login_hint"] == "ada@example.com")
        #expect(query["prompt"] == "select_account")
        #expect(query["domain_hint"] == "example.com")
        #expect(query["code_verifier"] == nil)
        #expect(!request.url.absoluteString.contains(request.verifier.value))
        #expect(request.url.absoluteString.contains("scope=openid%20offline_access%20User.Read"))
        #expect(request.url.host == "login.example.com")
    }

    @Test("state and nonce carry at least 128 bits and differ between requests")
    func entropy() throws {
        let first = try AuthorizationRequest(
            authorizationEndpoint: endpoint, clientID: "c", redirectURI: "http://127.0.0.1:1/", scopes: ["openid"])
        let second = try AuthorizationRequest(
            authorizationEndpoint: endpoint, clientID: "c", redirectURI: "http://127.0.0.1:1/", scopes: ["openid"])
        #expect(first.state.count >= 22 && first.nonce.count >= 22)  // 22 base64url chars = 132 bits
        #expect(first.state != second.state)
        #expect(first.nonce != second.nonce)
        #expect(first.state != first.nonce)
        #expect(first.verifier.value != second.verifier.value)
    }

    @Test("a query already in the endpoint is kept")
    func keepsEndpointQuery() throws {
        let request = try AuthorizationRequest(
            authorizationEndpoint: URL(string: "https://idp.example/auth?tenant=x")!, clientID: "c",
            redirectURI: "http://127.0.0.1:1/", scopes: ["openid"])
        let query = try parameters(of: request.url)
        #expect(query["tenant"] == "x")
        #expect(query["client_id"] == "c")
    }

    @Test("additional parameters cannot override authkit's own")
    func reservedParameters() {
        #expect(throws: AuthorizationError.self) {
            _ = try AuthorizationRequest(
                authorizationEndpoint: endpoint, clientID: "c", redirectURI: "http://127.0.0.1:1/", scopes: ["openid"],
                additionalParameters: [("code_challenge_method", "plain")])
        }
    }

    @Test("malformed scopes and empty client ids are refused")
    func invalidInput() {
        #expect(throws: AuthorizationError.self) {
            _ = try AuthorizationRequest(authorizationEndpoint: endpoint, clientID: "c", redirectURI: "x", scopes: ["a b"])
        }
        #expect(throws: AuthorizationError.self) {
            _ = try AuthorizationRequest(authorizationEndpoint: endpoint, clientID: "", redirectURI: "x", scopes: ["openid"])
        }
    }

    @Test("the description shows neither state, nonce nor verifier")
    func description() throws {
        let request = try AuthorizationRequest(
            authorizationEndpoint: endpoint, clientID: "c", redirectURI: "http://127.0.0.1:1/", scopes: ["openid"])
        let text = "\(request)"
        #expect(!text.contains(request.state))
        #expect(!text.contains(request.nonce))
        #expect(!text.contains(request.verifier.value))
    }
}
