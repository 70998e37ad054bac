import Foundation
import Testing
@testable import AuthKit

@Suite("Discovery")
struct DiscoveryClientTests {
    static func document(issuer: String, base: String, extra: String = "") -> String {
        """
        {"issuer":"\(issuer)","authorization_endpoint":"\(base)/authorize","token_endpoint":"\(base)/token",
         "jwks_uri":"\(base)/jwks","revocation_endpoint":"\(base)/revoke",
         "device_authorization_endpoint":"\(base)/device","response_types_supported":["code","id_token"],
         "code_challenge_methods_supported":["S256"],"id_token_signing_alg_values_supported":["RS256","ES256"],
         "authorization_response_iss_parameter_supported":true\(extra)}
        """
    }

    @Test("a well-formed document for the configured issuer is fetched and accepted")
    func accepted() async throws {
        let server = try await StubHTTPServer.start { request in
            let base = "http://\(request.header("Host") ?? "?")/tenant"
            return request.path == "/tenant/.well-known/openid-configuration"
                ? .json(200, Self.document(issuer: base, base: base)) : .text(404, "no")
        }
        defer { Task { await server.stop() } }
        let issuer = "http://127.0.0.1:\(server.port)/tenant"
        let metadata = try await DiscoveryClient().metadata(issuer: issuer)
        #expect(metadata.issuer == issuer)
        #expect(metadata.tokenEndpoint.absoluteString == issuer + "/token")
        #expect(metadata.jwksURI.absoluteString == issuer + "/jwks")
        #expect(metadata.idTokenSigningAlgValuesSupported == ["RS256", "ES256"])
        #expect(server.requests.count == 1)
    }

    @Test("the issuer in the document must equal the configured one exactly")
    func issuerMismatch() throws {
        let doc = Array(Self.document(issuer: "https://idp.example/", base: "https://idp.example").utf8)
        #expect(throws: DiscoveryError.issuerMismatch(expected: "https://idp.example", found: "https://idp.example/")) {
            _ = try ProviderMetadata(document: doc, expectedIssuer: "https://idp.example")
        }
        let ok = try ProviderMetadata(document: doc, expectedIssuer: "https://idp.example/")
        #expect(ok.tokenEndpoint.absoluteString == "https://idp.example/token")
        #expect(ok.authorizationResponseIssParameterSupported)
        #expect(ok.revocationEndpoint != nil && ok.deviceAuthorizationEndpoint != nil)
    }

    @Test("Microsoft's common endpoint publishes the {tenantid} template, which must match the configured template")
    func template() throws {
        let template = "https://login.microsoftonline.com/{tenantid}/v2.0"
        let doc = Array(Self.document(issuer: template, base: "https://login.microsoftonline.com/common/oauth2/v2.0").utf8)
        _ = try ProviderMetadata(document: doc, expectedIssuer: template)
        #expect(
            try DiscoveryClient.discoveryURL(issuer: template).absoluteString
                == "https://login.microsoftonline.com/common/v2.0/.well-known/openid-configuration")
        #expect(
            try DiscoveryClient.discoveryURL(issuer: template, tenant: "organizations").absoluteString
                == "https://login.microsoftonline.com/organizations/v2.0/.well-known/openid-configuration")
    }

    @Test("plain http endpoints are refused unless loopback")
    func insecureEndpoints() throws {
        let doc = Array(Self.document(issuer: "https://idp.example", base: "http://idp.example").utf8)
        #expect(throws: DiscoveryError.self) { _ = try ProviderMetadata(document: doc, expectedIssuer: "https://idp.example") }
        #expect(throws: DiscoveryError.self) { _ = try DiscoveryClient.discoveryURL(issuer: "http://idp.example") }
        for host in ["127.0.0.1", "127.1.2.3", "[::1]", "localhost"] {
            let local = Array(Self.document(issuer: "http://\(host):8080", base: "http://\(host):8080").utf8)
            _ = try ProviderMetadata(document: local, expectedIssuer: "http://\(host):8080")
        }
        #expect(!EndpointPolicy.isLoopback(host: "127.0.0.1.evil.example"))
        #expect(!EndpointPolicy.isLoopback(host: "128.0.0.1"))
    }

    @Test("documents that rule out the code flow or PKCE S256 are refused")
    func unsupported() {
        let noS256 = Array(
            Self.document(issuer: "https://i", base: "https://i").replacingOccurrences(of: "[\"S256\"]", with: "[\"plain\"]").utf8)
        #expect(throws: DiscoveryError.self) { _ = try ProviderMetadata(document: noS256, expectedIssuer: "https://i") }
        let noCode = Array(
            Self.document(issuer: "https://i", base: "https://i").replacingOccurrences(
                of: "[\"code\",\"id_token\"]", with: "[\"id_token\"]"
            ).utf8)
        #expect(throws: DiscoveryError.self) { _ = try ProviderMetadata(document: noCode, expectedIssuer: "https://i") }
    }

    @Test(
        "malformed documents are typed errors",
        arguments: [
            "", "[]", "not json", "{\"issuer\":5}", "{\"issuer\":\"https://i\"}",
            "{\"issuer\":\"https://i\",\"authorization_endpoint\":\"https://i/a\",\"token_endpoint\":\"https://i/t\",\"jwks_uri\":\"/relative\"}",
            "{\"issuer\":\"https://i\",\"authorization_endpoint\":\"https://u:p@i/a\",\"token_endpoint\":\"https://i/t\",\"jwks_uri\":\"https://i/j\"}",
        ])
    func malformed(_ text: String) {
        #expect(throws: DiscoveryError.self) { _ = try ProviderMetadata(document: Array(text.utf8), expectedIssuer: "https://i") }
    }

    /// One strict reader. A document that says two things (two token endpoints, one
    /// for each parser), trailing data, a BOM, or a string the size limit refuses: each refused,
    /// and the message says which member or why.
    @Test(
        "discovery documents are read strictly",
        arguments: [
            (
                #"{"issuer":"https://i","authorization_endpoint":"https://i/a","token_endpoint":"https://i/t","token_endpoint":"https://evil/t","jwks_uri":"https://i/j"}"#,
                "duplicate member name ‘token_endpoint’"
            ),
            (
                #"{"issuer":"https://i","authorization_endpoint":"https://i/a","token_endpoint":"https://i/t","jwks_uri":"https://i/j"} {}"#,
                "after the value"
            ),
            ("\u{FEFF}" + #"{"issuer":"https://i"}"#, "not valid JSON"),
            (#"{"issuer":"https://i","x":""# + String(repeating: "a", count: 300_000) + #""}"#, "longer than"),
            (
                #"{"issuer":"https://i","authorization_response_iss_parameter_supported":"yes"}"#,
                "‘authorization_response_iss_parameter_supported’ has the wrong type"
            ),
        ])
    func strictReading(_ text: String, reason: String) {
        #expect {
            _ = try ProviderMetadata(document: Array(text.utf8), expectedIssuer: "https://i")
        } throws: { error in
            guard case .malformedDocument(let message) = error as? DiscoveryError else { return false }
            return message.contains(reason)
        }
    }

    @Test("HTTP errors and oversized documents are reported, not parsed")
    func httpFailures() async throws {
        let server = try await StubHTTPServer.start { request in
            request.path.hasPrefix("/big") ? .respond(status: 200, body: Array(repeating: 0x20, count: 300_000)) : .text(404, "nope")
        }
        defer { Task { await server.stop() } }
        let base = "http://127.0.0.1:\(server.port)"
        await #expect(throws: DiscoveryError.httpStatus(404, url: "\(base)/missing/.well-known/openid-configuration")) {
            _ = try await DiscoveryClient().metadata(issuer: "\(base)/missing")
        }
        do {
            _ = try await DiscoveryClient().metadata(issuer: "\(base)/big")
            Issue.record("accepted an oversized document")
        } catch {
            guard case .transport(.responseTooLarge) = error else { Issue.record("unexpected \(error)"); return }
        }
    }
}
