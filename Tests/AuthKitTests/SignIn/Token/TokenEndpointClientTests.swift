import Foundation
import Testing
@testable import AuthKit

@Suite("TokenEndpointClient")
struct TokenEndpointClientTests {
    static let tokens =
        #"{"access_token":"AT-123","token_type":"bearer","expires_in":"3599","refresh_token":"RT-456","id_token":"a.b.c","scope":"openid User.Read"}"#

    func grant(_ code: String = "CODE-789") -> AuthorizationGrant { AuthorizationGrant(code: code, issuer: nil) }

    @Test("the code exchange sends exactly code, verifier, redirect and client id")
    func exchangeFields() async throws {
        let server = try await StubHTTPServer.start { _ in .json(200, Self.tokens) }
        defer { Task { await server.stop() } }
        let client = TokenEndpointClient(endpoint: server.baseURL.appendingPathComponent("token"), client: OAuthClient(clientID: "cid"))
        let verifier = try PKCEVerifier()
        let response = try await client.exchange(grant(), verifier: verifier, redirectURI: "http://127.0.0.1:9/cb")
        let first = try #require(server.requests.first)
        let fields = try #require(FormEncoding.decode(first.bodyText))
        let map = Dictionary(uniqueKeysWithValues: fields.map { ($0.name, $0.value) })
        #expect(
            map == [
                "grant_type": "authorization_code", "code": "CODE-789", "redirect_uri": "http://127.0.0.1:9/cb",
                "code_verifier": verifier.value, "client_id": "cid",
            ])
        #expect(server.requests.first?.header("Authorization") == nil)
        #expect(response.accessToken == "AT-123")
        #expect(response.expiresIn == 3599)
        #expect(response.refreshToken == "RT-456")
        #expect(response.scopes == ["openid", "User.Read"])
        #expect(!"\(response)".contains("AT-123") && !"\(response)".contains("RT-456"))
    }

    @Test("a confidential client authenticates with HTTP Basic, or in the body when only client_secret_post is offered")
    func confidentialClient() async throws {
        let server = try await StubHTTPServer.start { _ in .json(200, Self.tokens) }
        defer { Task { await server.stop() } }
        let client = OAuthClient(clientID: "my client", clientSecret: ClientSecret("s3cr:et"))
        let basic = TokenEndpointClient(endpoint: server.baseURL, client: client)
        _ = try await basic.refresh("RT")
        // RFC 6749 §2.3.1: form-encode, then base64 "my+client:s3cr%3Aet".
        #expect(server.requests[0].header("Authorization") == "Basic bXkrY2xpZW50OnMzY3IlM0FldA==")
        #expect(!server.requests[0].bodyText.contains("client_secret"))

        let post = TokenEndpointClient(endpoint: server.baseURL, client: client, authMethodsSupported: ["client_secret_post"])
        _ = try await post.refresh("RT", scopes: ["openid", "User.Read"])
        let fields = Dictionary(
            uniqueKeysWithValues: try #require(FormEncoding.decode(server.requests[1].bodyText)).map { ($0.name, $0.value) })
        #expect(fields["client_secret"] == "s3cr:et")
        #expect(fields["client_id"] == "my client")
        #expect(fields["scope"] == "openid User.Read")
        #expect(!"\(client)".contains("s3cr"))
    }

    @Test("RFC 6749 §5.2 errors become typed errors with the provider's cleaned description, and are not retried")
    func oauthErrors() async throws {
        let server = try await StubHTTPServer.start { _ in
            .json(400, #"{"error":"invalid_grant","error_description":"AADSTS70008: The refresh token has expired.\u001b[2J"}"#)
        }
        defer { Task { await server.stop() } }
        let client = TokenEndpointClient(endpoint: server.baseURL, client: OAuthClient(clientID: "cid"))
        do {
            _ = try await client.refresh("RT-SECRET")
            Issue.record("no error")
        } catch {
            #expect(error.isInvalidGrant)
            #expect(error == .oauth(code: "invalid_grant", description: "AADSTS70008: The refresh token has expired. [2J", status: 400))
            #expect(!error.description.contains("RT-SECRET"))
            #expect(error.description.contains("authkit login"))
        }
        #expect(server.requests.count == 1)
    }

    @Test(
        "non-OAuth failures and malformed answers are typed errors",
        arguments: [
            (500, "<html>oops</html>"), (200, "not json"), (200, #"{"token_type":"Bearer"}"#),
            (200, #"{"access_token":"x","token_type":"mac"}"#), (200, #"{"access_token":"x","token_type":"Bearer","expires_in":-5}"#),
            (200, #"{"access_token":"x","token_type":"Bearer","expires_in":"soon"}"#), (200, "[]"),
        ])
    func malformed(_ status: Int, _ body: String) async throws {
        let server = try await StubHTTPServer.start { _ in .json(status, body) }
        defer { Task { await server.stop() } }
        let client = TokenEndpointClient(endpoint: server.baseURL, client: OAuthClient(clientID: "cid"))
        await #expect(throws: TokenEndpointError.self) { _ = try await client.refresh("RT") }
    }

    @Test("a connection that never opened is retried once; a connection lost after sending is not")
    func retryPolicy() async throws {
        let ok = HTTPResponse(status: 200, body: Array(Self.tokens.utf8))
        let refusedOnce = ScriptedTransport([.failure(.cannotConnect(host: "h", detail: "refused")), .success(ok)])
        let client = TokenEndpointClient(
            endpoint: URL(string: "https://idp.example/token")!, client: OAuthClient(clientID: "c"),
            transport: refusedOnce, retryDelay: .milliseconds(1))
        _ = try await client.refresh("RT")
        #expect(refusedOnce.requests.count == 2)

        let lost = ScriptedTransport([.failure(.connectionLost(host: "h", detail: "reset")), .success(ok)])
        let noRetry = TokenEndpointClient(
            endpoint: URL(string: "https://idp.example/token")!, client: OAuthClient(clientID: "c"),
            transport: lost, retryDelay: .milliseconds(1))
        await #expect(throws: TokenEndpointError.transport(.connectionLost(host: "h", detail: "reset"))) {
            _ = try await noRetry.refresh("RT")
        }
        #expect(lost.requests.count == 1)
    }
}
