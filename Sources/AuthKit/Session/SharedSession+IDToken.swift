import JOSE
import SecretStore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension SharedSession {
    /// A verified id_token that lives at least `minimumLifetime`: the stored one while it
    /// does, else one from a refresh (the same single refresh path every tool shares, which
    /// verifies the new id_token before storing it).
    ///
    /// The stored id_token was verified when it was stored (`TokenRecord/idTokenVerifiedAt`);
    /// only its `exp` is read here. A provider that sends no id_token on refresh cannot meet a
    /// lifetime longer than the stored one has left: ``AuthKitError/unsupported(_:)`` says so.
    public func validIDToken(account: String? = nil, minimumLifetime: Duration = .seconds(60)) async throws(AuthKitError) -> IDToken {
        if let agent, let token = try await agent.idToken(self, account: account, minimumLifetime: minimumLifetime) {
            return token
        }
        let (_, record) = try await select(account: account)
        if let token = RefreshStateMachine.usableIDToken(record, lifetime: minimumLifetime, now: clock()) { return token }
        // A refresh through the shared path, forced even if the access token is still good.
        let current = AccessToken(
            value: record.accessToken, expiresAt: record.accessTokenExpiry, scopes: record.scopes, account: record.account,
            refreshed: false)
        _ = try await validAccessToken(account: account ?? record.account, minimumLifetime: minimumLifetime, replacing: current)
        let (_, renewed) = try await select(account: account ?? record.account)
        guard let token = RefreshStateMachine.usableIDToken(renewed, lifetime: minimumLifetime, now: clock()) else {
            throw .unsupported(
                "the provider's id_token for \(renewed.account) does not live \(minimumLifetime.components.seconds) s more even after a refresh "
                    + "(the provider may not send id_tokens on refresh); lower --min-ttl or sign in again")
        }
        return IDToken(value: token.value, expiresAt: token.expiresAt, account: token.account, refreshed: true)
    }
}
