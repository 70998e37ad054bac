import Foundation
import SecretStore
import Testing
import TestSupport
@testable import AuthKit

/// DPoP and PAR against Debian's glewlwyd 2.7.5 with nonces mandatory and pushed requests
/// required — a provider nobody here wrote. It matches loopback redirect URIs port included,
/// so each test registers its port before the pushed request names it.
@Suite struct DPoPGlewlwydTests {
    static func harness() async throws -> (SignInHarness, Profile) {
        var options = OIDCTestProvider.Options()
        options.dpopNonce = true
        options.parRequired = true
        let harness = try await SignInHarness.start(.glewlwyd, options: options)
        let port = try TestSSHServer.freePort()
        try await harness.provider.registerRedirect("http://127.0.0.1:\(port)/")
        var profile = try harness.profile()
        profile.redirectPort = port
        return (harness, profile)
    }

    static func userinfo(_ harness: SignInHarness) async throws -> URL {
        let text = try await harness.provider.discovery()["userinfo_endpoint"].string ?? ""
        return try #require(URL(string: text))
    }

    @Test func signInRequestAndRefreshWithNoncesAndPushedRequests() async throws {
        let (harness, profile) = try await Self.harness()
        let discovery = try await harness.provider.discovery()
        #expect(discovery["require_pushed_authorization_requests"].bool == true)
        _ = try await harness.run(harness.flow(profile)).get()
        let record = try #require(try await harness.records().first)
        #expect(record.tokenType == "DPoP" && record.dpopThumbprint != nil)

        // userinfo with a proof (401 use_dpop_nonce, then the nonce): the user's claims.
        let userinfo = try await Self.userinfo(harness)
        let response = try await harness.session.send(HTTPRequest(url: userinfo))
        #expect(response.status == 200, "\(response.status) \(String(decoding: response.body, as: UTF8.self))")

        // The same access token as Bearer: refused.
        var bearer = HTTPRequest(url: userinfo)
        bearer.headers.add("Authorization", "Bearer \(record.accessToken)")
        #expect(try await CurlHTTPTransport().send(bearer).status == 401)

        // A refresh (glewlwyd sends no id_token on refresh), proved, by another tool.
        let refreshed = try await harness.secondSession().validAccessToken(minimumLifetime: .seconds(86_400 * 300))
        #expect(refreshed.refreshed && refreshed.tokenType == "DPoP")
        #expect(try await harness.secondSession().send(HTTPRequest(url: userinfo)).status == 200)
        try await harness.expectNoSecretsLeaked()
    }

    @Test func theStoredRefreshTokenIsRefusedWithoutTheKey() async throws {
        let (harness, profile) = try await Self.harness()
        _ = try await harness.run(harness.flow(profile)).get()
        let record = try #require(try await harness.records().first)
        let refreshToken = try #require(record.refreshToken)
        var endpoint = TokenEndpointClient(endpoint: record.tokenEndpoint.url, client: OAuthClient(clientID: record.clientID))
        do {
            _ = try await endpoint.refresh(refreshToken)
            Issue.record("the refresh token worked without a proof")
        } catch {
            #expect(error.description.contains("HTTP 4") || error.description.contains("refused"), "\(error)")
        }
        endpoint.dpop = try DPoPKey.make(.off).0
        do {
            _ = try await endpoint.refresh(refreshToken)
            Issue.record("the refresh token worked with another key's proof")
        } catch {
            #expect(error.description.contains("HTTP 4"), "\(error)")
        }
        // With the sign-in's own key it still refreshes.
        #expect(try await harness.session.validAccessToken(minimumLifetime: .seconds(86_400 * 300)).refreshed)
    }

    @Test func neverGivesABearerSignIn() async throws {
        let (harness, base) = try await Self.harness()
        var profile = base
        profile.dpop = .never
        _ = try await harness.run(harness.flow(profile)).get()
        let record = try #require(try await harness.records().first)
        #expect(record.tokenType == nil)
        let response = try await harness.session.send(HTTPRequest(url: try await Self.userinfo(harness)))
        #expect(response.status == 200)
    }
}
