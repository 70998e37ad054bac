#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The provider's endpoints as a stored sign-in names them, for a refresh and a sign-out:
/// the token endpoint and the revocation endpoint, with the sign-in's client and DPoP key.
struct RecordEndpoints: Sendable {
    let transport: any HTTPTransport
    let clock: @Sendable () -> Date

    /// The token endpoint of `record`, each request proved with `key` when the sign-in is bound.
    func tokenClient(for record: TokenRecord, key: DPoPKey?) -> TokenEndpointClient {
        var client = TokenEndpointClient(
            endpoint: record.tokenEndpoint.url,
            client: OAuthClient(clientID: record.clientID, clientSecret: record.clientSecret.map(ClientSecret.init)),
            authMethodsSupported: record.tokenEndpointAuthMethods, transport: transport, clock: clock)
        client.dpop = key
        return client
    }

    /// Revokes `refreshToken` (RFC 7009) at the revocation endpoint `record` names, within ten
    /// seconds, with a proof when the sign-in is bound. Used by sign-out, and on a refresh
    /// answer that came for another identity.
    func revoke(_ refreshToken: String?, for record: TokenRecord, key: DPoPKey?) async -> SharedSession.SignOutOutcome.Revocation {
        guard let refreshToken, let endpoint = record.revocationEndpoint?.url else { return .notSupported }
        var client = tokenClient(for: record, key: key)
        client.timeout = .seconds(10)
        do {
            try await RevocationClient(endpoint: endpoint, tokenClient: client).revoke(refreshToken)
            return .revoked
        } catch {
            return .failed(error.description)
        }
    }
}
