#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Token exchange (RFC 8693) for a session: a token for another audience, or with fewer rights,
/// from the sign-in's own access token — checked as narrow as asked, kept beside the sign-in
/// (one exchange per group at a time across processes, as a refresh), handed to every tool that
/// asks the same.
struct TokenExchange {
    let session: SharedSession

    func token(account: String?, narrowing: TokenNarrowing, minimumLifetime: Duration) async throws(AuthKitError) -> AccessToken {
        let subject = try await session.validAccessToken(account: account, minimumLifetime: max(minimumLifetime, .seconds(60)))
        let (item, record) = try await session.select(account: subject.account)
        guard record.tokenExchange == true else {
            throw .unsupported(
                "the provider does not offer token exchange (RFC 8693: its discovery lists no \(TokenEndpointClient.tokenExchangeGrant)); "
                    + "sign in again if it does now")
        }
        if let token = RefreshStateMachine.usableToken(record, narrowing: narrowing, lifetime: minimumLifetime, now: session.clock()) {
            return token
        }
        let held = try await session.acquireLock()
        defer { held.release() }
        // Another process may have exchanged meanwhile; a rotated refresh token the store
        // refused is built on, never overwritten.
        guard let stored = try await session.readRecord(item.key) else {
            throw .notSignedIn(group: session.group.name, account: subject.account)
        }
        let current = PendingRecord.find(item.key, current: stored, logger: session.logger) ?? stored
        if let token = RefreshStateMachine.usableToken(current, narrowing: narrowing, lifetime: minimumLifetime, now: session.clock()) {
            return token
        }
        let key = try await session.dpopKeys.key(for: current, at: item.key)
        let client = session.endpoints.tokenClient(for: current, key: key)
        let response: TokenResponse
        do {
            response = try await client.exchange(
                subject.value, audience: narrowing.audience, resources: narrowing.resources, scopes: narrowing.scopes)
        } catch {
            throw .tokenEndpoint(error)
        }
        if let problem = narrowing.problem(accessToken: response.accessToken, scopes: response.scopes, grant: current.scopes) {
            throw .notNarrowed(problem)
        }
        guard let cacheKey = narrowing.cacheKey else { throw .unsupported("a token exchange names an audience or a resource") }
        var updated = current
        let scopes = response.scopes ?? narrowing.scopes ?? current.scopes
        let token = TokenRecord.ScopedToken(
            accessToken: response.accessToken,
            expiresAt: (response.expiresAt ?? session.clock().addingTimeInterval(3600)).timeIntervalSince1970,
            scopes: scopes, resources: narrowing.resources.isEmpty ? nil : narrowing.resources)
        updated.additionalTokens = updated.addingAdditionalToken(token, for: cacheKey, now: session.clock().timeIntervalSince1970)
        updated.generation = RefreshStateMachine.nextGeneration(current.generation)
        // The sign-in's own tokens are unchanged: a failed write loses nothing but this token.
        do { try await session.write(updated, for: item.key) } catch {
            session.logger.debug("the exchanged token was not kept", metadata: ["reason": "\(error.summary)"])
        }
        return AccessToken(
            value: response.accessToken, expiresAt: response.expiresAt ?? session.clock().addingTimeInterval(3600), scopes: scopes,
            account: current.account, refreshed: true, tokenType: response.tokenType, resources: narrowing.resources)
    }
}

extension SharedSession {
    /// A token exchanged (RFC 8693) from the sign-in's access token for `audience` and
    /// `resources`, with at most `scopes`, where the provider offers the grant: kept beside the
    /// sign-in and shared with every tool that asks the same. The provider's answer must be as
    /// narrow as asked (``AuthKitError/notNarrowed(_:)`` otherwise).
    public func exchangedToken(
        audience: String?, resources: [String] = [], scopes: [String]? = nil, account: String? = nil,
        minimumLifetime: Duration = .seconds(60)
    ) async throws(AuthKitError) -> AccessToken {
        guard audience != nil || !resources.isEmpty else { throw .unsupported("a token exchange names an audience or a resource") }
        return try await TokenExchange(session: self).token(
            account: account, narrowing: TokenNarrowing(scopes: scopes, resources: resources, audience: audience),
            minimumLifetime: minimumLifetime)
    }
}
