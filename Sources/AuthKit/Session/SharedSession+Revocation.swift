import SecretStore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension SharedSession {
    /// Revokes `refreshToken` (RFC 7009) at the revocation endpoint `record` names, within
    /// ten seconds. Used by sign-out, and on a refresh answer that came for another identity.
    func revoke(_ refreshToken: String?, for record: TokenRecord) async -> SignOutOutcome.Revocation {
        guard let refreshToken, let endpoint = record.revocationEndpoint?.url else { return .notSupported }
        var client = tokenClient(for: record)
        client.timeout = .seconds(10)
        do {
            try await RevocationClient(endpoint: endpoint, tokenClient: client).revoke(refreshToken)
            return .revoked
        } catch {
            return .failed(error.description)
        }
    }
}
