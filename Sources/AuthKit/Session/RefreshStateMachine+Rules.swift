import JOSE

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The rules a refresh decides by, as pure functions of the records and tokens: which stored
/// token is still usable, what an id_token on refresh must keep, how a generation advances.
extension RefreshStateMachine {
    static func usableToken(_ record: TokenRecord, narrowing: TokenNarrowing, lifetime: Duration, now: Date) -> AccessToken? {
        if let key = narrowing.cacheKey {
            guard let extra = record.additionalTokens?[key], let expires = extra.expiresAt,
                expires - now.timeIntervalSince1970 >= Double(lifetime.components.seconds)
            else { return nil }
            return AccessToken(
                value: extra.accessToken, expiresAt: Date(timeIntervalSince1970: expires), scopes: extra.scopes,
                account: record.account, refreshed: false, tokenType: record.tokenType ?? "Bearer", resources: extra.resources ?? [])
        }
        guard record.accessTokenLives(lifetime, at: now) else { return nil }
        return AccessToken(
            value: record.accessToken, expiresAt: record.accessTokenExpiry, scopes: record.scopes, account: record.account,
            refreshed: false, tokenType: record.tokenType ?? "Bearer")
    }

    /// The stored id_token when it was verified and lives `lifetime` more (only its `exp` is read).
    static func usableIDToken(_ record: TokenRecord, lifetime: Duration, now: Date) -> IDToken? {
        guard let idToken = record.idToken, record.idTokenVerifiedAt != nil, let claims = RefreshStateMachine.unverifiedClaims(idToken),
            let expiry = claims.expirationSeconds, expiry.isFinite
        else { return nil }
        guard expiry - now.timeIntervalSince1970 >= Double(lifetime.components.seconds) else { return nil }
        return IDToken(value: idToken, expiresAt: Date(timeIntervalSince1970: expiry), account: record.account, refreshed: false)
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

    /// Whether a record a failed write left pending (``PendingSave``) still applies: it was
    /// derived from the record the store holds now (`replacing` is that record's generation), for
    /// the same sign-in. Anything else — a new sign-in, a refresh that did save — replaced it.
    static func pending(_ pending: TokenRecord, replacing: String, appliesTo current: TokenRecord) -> Bool {
        replacing == String(current.generation) && pending.issuer == current.issuer && pending.subject == current.subject
            && pending.account == current.account && pending.clientID == current.clientID
            && pending.generation == nextGeneration(current.generation)
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
}
