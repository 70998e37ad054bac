import Foundation
import Testing
@testable import AuthKit

@Suite("RevocationClient")
struct RevocationClientTests {
    @Test("revocation posts the token with its type hint and client id; errors are typed")
    func revoke() async throws {
        let server = try await StubHTTPServer.start { request in
            request.bodyText.contains("token=bad") ? .json(400, #"{"error":"unsupported_token_type"}"#) : .respond(status: 200)
        }
        defer { Task { await server.stop() } }
        let tokens = TokenEndpointClient(endpoint: server.baseURL.appendingPathComponent("token"), client: OAuthClient(clientID: "cid"))
        let client = RevocationClient(endpoint: server.baseURL.appendingPathComponent("revoke"), tokenClient: tokens)
        try await client.revoke("RT-1")
        let fields = try #require(FormEncoding.decode(server.requests[0].bodyText))
        #expect(server.requests[0].path == "/revoke")
        #expect(fields.map(\.name) == ["token", "token_type_hint", "client_id"])
        #expect(fields[0].value == "RT-1" && fields[1].value == "refresh_token")
        await #expect(throws: TokenEndpointError.oauth(code: "unsupported_token_type", description: nil, status: 400)) {
            try await client.revoke("bad")
        }
    }
}
