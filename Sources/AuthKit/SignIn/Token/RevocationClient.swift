#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Token revocation (RFC 7009), used on sign-out before the stored tokens are removed.
package struct RevocationClient: Sendable {
    package var endpoint: URL
    package var tokenClient: TokenEndpointClient

    package init(endpoint: URL, tokenClient: TokenEndpointClient) {
        self.endpoint = endpoint
        self.tokenClient = tokenClient
    }

    /// Revokes `token` (`token_type_hint`: `refresh_token` or `access_token`). The provider
    /// answers 200 for unknown and already-revoked tokens as well (RFC 7009 §2.2).
    package func revoke(_ token: String, hint: String = "refresh_token") async throws(TokenEndpointError) {
        let response = try await tokenClient.post([("token", token), ("token_type_hint", hint)], to: endpoint)
        guard response.status == 200 else {
            throw TokenEndpointError.oauthError(body: response.body, status: response.status) ?? .httpStatus(response.status)
        }
    }
}
