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

    func refreshUnderLock(key: ItemKey, scopes: [String]?, minimumLifetime: Duration, rejected: String?) async throws(AuthKitError)
        -> AccessToken
    {
        let held = try await acquireLock()
        defer { held.release() }

        // Another process may have refreshed (or signed out) while we waited.
        guard var record = try await readRecord(key) else { throw .notSignedIn(group: group.name, account: key.account) }
        if let token = Self.usableToken(record, scopes: scopes, lifetime: minimumLifetime, now: clock()), token.value != rejected {
            logger.debug("another process refreshed meanwhile", metadata: ["generation": "\(record.generation)"])
            return token
        }
        guard let jwksURI = URL(string: record.jwksURI) else {
            throw .corruptRecord(account: record.account, reason: "its jwks_uri is invalid")
        }
        // The keys first: a key-set outage then fails this call before the provider has used
        // up the refresh token. (Should the answer's kid still be unknown, see below.)
        do { _ = try await keys.keys(for: jwksURI) } catch { throw .keys(error) }
        var response: TokenResponse?
        // At most two refreshes: ours, and one with the refresh token another process renewed.
        for attempt in 1...2 where response == nil {
            guard let refreshToken = record.refreshToken else {
                throw .loginRequired(
                    account: record.account,
                    reason: "the access token expired and the provider issued no refresh token (include the offline_access scope)")
            }
            do {
                logger.debug(
                    "refreshing",
                    metadata: [
                        "token_endpoint": "\(URL(string: record.tokenEndpoint)?.redactedOrigin ?? "?")",
                        "generation": "\(record.generation)",
                    ])
                response = try await tokenClient(for: record).refresh(refreshToken, scopes: scopes)
            } catch  where error.isInvalidGrant {
                logger.debug("refresh token refused (invalid_grant); reading the store again")
                // A rotating refresh token may have been used by another process that did not
                // take our lock; only a record that did not change means the sign-in is gone.
                guard let current = try await readRecord(key), current.generation != record.generation else {
                    throw .loginRequired(account: record.account, reason: "the provider no longer accepts the refresh token (\(error))")
                }
                if let token = Self.usableToken(current, scopes: scopes, lifetime: minimumLifetime, now: clock()), token.value != rejected {
                    return token
                }
                // Renewed, but its access token is too short-lived for us: its refresh token is
                // the live one now.
                guard attempt == 1, let renewed = current.refreshToken, renewed != refreshToken else {
                    throw .loginRequired(account: record.account, reason: "the provider no longer accepts the refresh token (\(error))")
                }
                record = current
            } catch {
                throw .tokenEndpoint(error)
            }
        }
        guard let response else { throw .loginRequired(account: record.account, reason: "the refresh token was not accepted") }
        return try await accept(response, for: record, key: key, scopes: scopes, jwksURI: jwksURI)
    }

    /// What happens to a refresh answer once the provider has given it (SECURITY.md
    /// "What a refresh keeps"). A rotating provider has used up the old refresh token by now,
    /// so the new one is stored before anything that can fail; what is handed out is decided
    /// after the checks.
    func accept(
        _ response: TokenResponse, for original: TokenRecord, key: ItemKey, scopes: [String]?, jwksURI: URL
    ) async throws(AuthKitError) -> AccessToken {
        let now = clock()
        let rotated = response.refreshToken.flatMap { $0 == original.refreshToken ? nil : $0 }

        // 1. Another identity (read from the claims before their signature is checked, so that
        //    nothing of another user's answer is ever written under this account).
        if let idToken = response.idToken, let claims = Self.unverifiedClaims(idToken),
            claims.issuer != original.issuer || claims.subject != original.subject
        {
            let revoked = await revoke(rotated, for: original) == .revoked
            logger.debug("refresh answered for another identity; nothing kept", metadata: ["new_refresh_token_revoked": "\(revoked)"])
            throw .identityChanged(revokedNewRefreshToken: revoked)
        }

        // 2. Keep the rotated refresh token at once: if this process dies, or a check below
        //    fails, the next one refreshes with it instead of a dead one.
        var kept = original
        kept.generation = Self.nextGeneration(original.generation)
        if let rotated {
            kept.refreshToken = rotated
            kept.refreshProblem = "the provider's answer is being checked"
            kept.refreshProblemAt = now.timeIntervalSince1970
            try await write(kept, for: key)
            logger.debug("rotated refresh token stored before the checks", metadata: ["generation": "\(kept.generation)"])
        }

        // 3. The new id_token, if any: signature and claims, then OIDC Core §12.2 against the
        //    stored one. A failure keeps the new refresh token, records the problem, hands out
        //    nothing; the next request refreshes again.
        var verifiedIDToken: String?
        if let idToken = response.idToken {
            do throws(AuthKitError) {
                let validator = IDTokenValidator(
                    issuer: .exact(original.issuer), clientID: original.clientID,
                    allowedAlgorithms: JWSAlgorithm.allowlist(advertised: original.idTokenAlgorithms), clock: clock)
                let validated = try await keys.validate(
                    idToken, validator: validator, jwksURI: jwksURI, nonce: nil, refetchWithinCooldown: true)
                if let reason = Self.refreshRule(validated.claims, original: original.idToken) {
                    throw AuthKitError.refreshRejected(reason)
                }
                verifiedIDToken = idToken
            } catch {
                var failed = kept
                failed.refreshProblem = Self.problemText(error)
                failed.refreshProblemAt = now.timeIntervalSince1970
                if rotated != nil || failed.refreshProblem != original.refreshProblem {
                    try await write(failed, for: key)
                }
                logger.debug("refreshed id_token refused; new refresh token kept, nothing handed out")
                throw error
            }
        }

        // 4. Everything checked: store the answer whole.
        var updated = kept
        if let verifiedIDToken, scopes == nil {
            updated.idToken = verifiedIDToken
            updated.idTokenVerifiedAt = now.timeIntervalSince1970
        }
        if let scopes {
            var extra = updated.additionalTokens ?? [:]
            extra[scopes.joined(separator: " ")] = TokenRecord.ScopedToken(
                accessToken: response.accessToken, expiresAt: response.expiresAt?.timeIntervalSince1970,
                scopes: response.scopes ?? scopes)
            updated.additionalTokens = extra
        } else {
            updated.accessToken = response.accessToken
            updated.accessTokenExpiresAt = response.expiresAt?.timeIntervalSince1970
            if let granted = response.scopes { updated.scopes = granted }
        }
        updated.refreshedAt = now.timeIntervalSince1970
        updated.refreshProblem = nil
        updated.refreshProblemAt = nil
        try await write(updated, for: key)
        logger.debug(
            "refreshed and stored",
            metadata: [
                "generation": "\(updated.generation)", "refresh_token_rotated": "\(rotated != nil)",
                "expires_in_s": "\(response.expiresIn.map(String.init) ?? "?")",
            ])
        let expires = response.expiresAt ?? now.addingTimeInterval(3600)
        return AccessToken(
            value: response.accessToken, expiresAt: expires, scopes: response.scopes ?? scopes ?? original.scopes,
            account: original.account, refreshed: true)
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
