import JOSE
import SecretStore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The one refresh path every tool of a group shares (see ``SharedSession``).
extension SharedSession {
    /// The requested scopes, or nil when they are the sign-in's own.
    static func normalized(_ scopes: [String]?, granted: [String]) -> [String]? {
        guard let scopes, !scopes.isEmpty else { return nil }
        let wanted = Array(Set(scopes)).sorted()
        return Set(wanted).isSubset(of: Set(granted)) ? nil : wanted
    }

    static func usableToken(_ record: TokenRecord, scopes: [String]?, lifetime: Duration, now: Date) -> AccessToken? {
        if let scopes {
            guard let extra = record.additionalTokens?[scopes.joined(separator: " ")], let expires = extra.expiresAt,
                expires - now.timeIntervalSince1970 >= Double(lifetime.components.seconds)
            else { return nil }
            return AccessToken(
                value: extra.accessToken, expiresAt: Date(timeIntervalSince1970: expires), scopes: extra.scopes,
                account: record.account, refreshed: false)
        }
        guard record.accessTokenLives(lifetime, at: now) else { return nil }
        return AccessToken(
            value: record.accessToken, expiresAt: record.accessTokenExpiry, scopes: record.scopes, account: record.account,
            refreshed: false)
    }

    /// The refresh under the group's lock: ``RefreshStateMachine`` decides, this performs what
    /// it asks (reads, key fetches, the token endpoint, validation, writes) and feeds back the
    /// results.
    func refreshUnderLock(key: ItemKey, scopes: [String]?, minimumLifetime: Duration, rejected: String?) async throws(AuthKitError)
        -> AccessToken
    {
        let held = try await acquireLock()
        defer { held.release() }
        var machine = RefreshStateMachine(
            group: group.name, account: key.account, scopes: scopes, minimumLifetime: minimumLifetime, rejected: rejected)
        var effect = machine.first
        var rereads = 0
        while true {
            switch effect {
            case .readRecord:
                // Another process may have refreshed (or signed out) while we waited.
                if rereads > 0 { logger.debug("refresh token refused (invalid_grant); reading the store again") }
                rereads += 1
                effect = machine.recordRead(try await readRecord(key), now: clock())
            case .fetchKeys(let url):
                // The keys first: a key-set outage then fails this call before the provider
                // has used up the refresh token.
                do {
                    _ = try await keys.keys(for: url)
                    effect = machine.keysFetched(nil)
                } catch {
                    effect = machine.keysFetched(error)
                }
            case .refresh(let refreshToken, let record):
                logger.debug(
                    "refreshing",
                    metadata: [
                        "token_endpoint": "\(URL(string: record.tokenEndpoint)?.redactedOrigin ?? "?")",
                        "generation": "\(record.generation)",
                    ])
                do throws(TokenEndpointError) {
                    effect = machine.refreshed(
                        .success(try await tokenClient(for: record).refresh(refreshToken, scopes: scopes)), now: clock())
                } catch {
                    effect = machine.refreshed(.failure(error), now: clock())
                }
            case .revoke(let rotated, let record):
                let revoked = await revoke(rotated, for: record) == .revoked
                logger.debug("refresh answered for another identity; nothing kept", metadata: ["new_refresh_token_revoked": "\(revoked)"])
                effect = machine.revoked(revoked)
            case .validateIDToken(let idToken, let record, let jwksURI):
                let validator = IDTokenValidator(
                    issuer: .exact(record.issuer), clientID: record.clientID,
                    allowedAlgorithms: JWSAlgorithm.allowlist(advertised: record.idTokenAlgorithms), clock: clock)
                do throws(AuthKitError) {
                    let validated = try await keys.validate(
                        idToken, validator: validator, jwksURI: jwksURI, nonce: nil, refetchWithinCooldown: true)
                    effect = machine.idTokenValidated(.success(validated.claims))
                } catch {
                    logger.debug("refreshed id_token refused; new refresh token kept, nothing handed out")
                    effect = machine.idTokenValidated(.failure(error))
                }
            case .write(let record):
                try await write(record, for: key)
                logger.debug("stored", metadata: ["generation": "\(record.generation)"])
                effect = machine.written()
            case .finish(let token):
                logger.debug(token.refreshed ? "refreshed and stored" : "another process refreshed meanwhile")
                return token
            case .fail(let error):
                throw error
            }
        }
    }

    /// OIDC Core §12.2 beyond issuer, subject and audience (which the validator and step 1
    /// check): `iat` present and not older than the stored id_token's; `auth_time` unchanged
    /// when the original had one; a `nonce`, if present, equal to the original's. Returns why
    /// not, or nil.
    static func refreshRule(_ claims: JWTClaims, original: String?) -> String? {
        guard let issuedAt = claims.issuedAtSeconds else { return "its id_token has no iat" }
        guard let original, let old = unverifiedClaims(original) else { return nil }
        if let oldIssuedAt = old.issuedAtSeconds, issuedAt < oldIssuedAt {
            return "its id_token was issued before the one it replaces (iat)"
        }
        if let oldAuthTime = old["auth_time"] {
            guard claims["auth_time"] == oldAuthTime else { return "its id_token's auth_time differs from the sign-in's" }
        }
        if let nonce = claims["nonce"], nonce != old["nonce"] {
            return "its id_token carries another nonce than the sign-in's"
        }
        return nil
    }

    /// The claims of a compact JWS, read without checking its signature: only to compare
    /// identities before deciding what to keep, never to trust them.
    static func unverifiedClaims(_ token: String) -> JWTClaims? {
        guard let jws = try? CompactJWS(parsing: token) else { return nil }
        return try? JWTClaims(payload: jws.payload)
    }

    /// `generation + 1`, wrapping to 1 instead of trapping on a record that says Int.max.
    static func nextGeneration(_ generation: Int) -> Int {
        generation >= Int.max - 1 ? 1 : max(0, generation) + 1
    }

    static func problemText(_ error: AuthKitError) -> String {
        switch error {
        case .idToken(let jose): return "its id_token was rejected: \(jose)"
        case .refreshRejected(let reason): return reason
        case .keys(let keys): return "\(keys)"
        default: return "\(error)"
        }
    }

    func tokenClient(for record: TokenRecord) -> TokenEndpointClient {
        TokenEndpointClient(
            endpoint: URL(string: record.tokenEndpoint) ?? URL(fileURLWithPath: "/"),
            client: OAuthClient(clientID: record.clientID, clientSecret: record.clientSecret.map(ClientSecret.init)),
            authMethodsSupported: record.tokenEndpointAuthMethods, transport: transport, clock: clock)
    }
}
