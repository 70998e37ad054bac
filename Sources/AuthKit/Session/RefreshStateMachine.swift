import JOSE
import SecretStore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The refresh rules as decisions, without a provider, a store or a lock: what a refresh under
/// the group's lock does next, given what the store, the key set, the token endpoint and the
/// id_token validator answered. ``SharedSession`` is the shell that performs each ``Effect``
/// and feeds back the result (SECURITY.md, "What a refresh keeps"):
///
/// * Another process may have refreshed while this one waited for the lock: a record that
///   already holds a token living long enough (and not the one a server rejected) is used.
/// * The keys come before the refresh token is used: a key-set outage fails the call before
///   a rotating provider has used the refresh token up.
/// * `invalid_grant` is believed only when the record did not change meanwhile: another
///   process may have rotated the refresh token; then its token is used, or its refresh
///   token tried once.
/// * An answer for another identity keeps nothing and revokes its new refresh token.
/// * One write per refresh, right after the answer's local checks (the id_token's signature,
///   claims and OIDC Core §12.2): passing, the answer is stored whole; failing, the new refresh
///   token is stored with the problem and nothing is handed out.
/// * A rotated refresh token is never lost: a write that fails keeps the new record in the
///   pending place (``PendingSave``), which the next refresh under the lock takes back into the
///   store.
struct RefreshStateMachine {
    enum Effect {
        /// Read the group's record again (under the lock), then ``recordRead(_:now:)``.
        case readRecord
        /// Have the provider's keys at hand, then ``keysFetched(_:)``.
        case fetchKeys(URL)
        /// Send `refreshToken` to the token endpoint of `record`, then ``refreshed(_:now:)``.
        case refresh(refreshToken: String, record: TokenRecord)
        /// Revoke a new refresh token given for another identity, then ``revoked(_:)``.
        case revoke(String?, record: TokenRecord)
        /// Validate the new id_token against `record`'s issuer, client and algorithms, then
        /// ``idTokenValidated(_:)``.
        case validateIDToken(String, record: TokenRecord, jwksURI: URL)
        /// Write `record`, then ``written(_:)``.
        case write(TokenRecord)
        /// The write of a rotated refresh token failed: keep `record` (which replaces the
        /// record of generation `replacing`) where the next refresh finds it, then
        /// ``pendingKept(_:)``.
        case keepPending(TokenRecord, replacing: Int)
        /// Done: hand out this token.
        case finish(AccessToken)
        /// Done: this error.
        case fail(AuthKitError)
    }

    private enum Phase {
        case start, restoring, keys, refreshing(attempt: Int), rereading(attempt: Int, TokenEndpointError), revoking
        case validating, writingFailed(AuthKitError), writingUpdated(AccessToken), keepingPending(SecretStoreError), done
    }

    let group: String
    let account: String
    /// Other scopes or resources than the sign-in's own (``TokenNarrowing/none``: its own token).
    let narrowing: TokenNarrowing
    let minimumLifetime: Duration
    /// The access token a server rejected: never handed out again.
    let rejected: String?

    private var phase = Phase.start
    private var record: TokenRecord?
    private var jwksURI = URL(fileURLWithPath: "/")
    private var response: TokenResponse?
    private var rotated: String?
    private var kept: TokenRecord?
    /// The record of the last write asked for.
    private var written: TokenRecord?
    private var verifiedIDToken: String?
    private var now = Date(timeIntervalSince1970: 0)

    init(group: String, account: String, narrowing: TokenNarrowing, minimumLifetime: Duration, rejected: String?) {
        self.group = group
        self.account = account
        self.narrowing = narrowing
        self.minimumLifetime = minimumLifetime
        self.rejected = rejected
    }

    /// The first effect: read the record under the lock.
    var first: Effect { .readRecord }

    /// The record as the store holds it now, and the one a failed write left pending in its
    /// place, when that still applies (``PendingRecord``): the pending one is written back first.
    mutating func recordRead(_ current: TokenRecord?, pending: TokenRecord? = nil, now: Date) -> Effect {
        switch phase {
        case .start:
            guard let current else { return done(.fail(.notSignedIn(group: group, account: account))) }
            if let pending {
                record = pending
                self.now = now
                phase = .restoring
                return .write(pending)
            }
            return read(current, now: now)
        case .rereading(let attempt, let error):
            return reread(current, attempt: attempt, error: error, now: now)
        default:
            return unexpected("a record")
        }
    }

    private mutating func read(_ current: TokenRecord, now: Date) -> Effect {
        record = current
        if let token = usable(current, now: now) { return done(.finish(token)) }
        jwksURI = current.jwksURI.url
        phase = .keys
        return .fetchKeys(jwksURI)
    }

    private mutating func reread(_ current: TokenRecord?, attempt: Int, error: TokenEndpointError, now: Date) -> Effect {
        guard let original = record else { return done(.fail(.notSignedIn(group: group, account: account))) }
        let gone = AuthKitError.loginRequired(
            account: original.account, reason: "the provider no longer accepts the refresh token (\(error))")
        // Only a record that did not change means the sign-in is gone.
        guard let current, current.generation != original.generation else { return done(.fail(gone)) }
        if let token = usable(current, now: now) { return done(.finish(token)) }
        // Renewed, but its access token is too short-lived for us: its refresh token is the
        // live one now.
        guard attempt == 1, let renewed = current.refreshToken, renewed != original.refreshToken else { return done(.fail(gone)) }
        record = current
        phase = .refreshing(attempt: 2)
        return .refresh(refreshToken: renewed, record: current)
    }

    /// The provider's keys are at hand (or why not).
    mutating func keysFetched(_ failure: JWKSError?) -> Effect {
        guard case .keys = phase, let record else { return unexpected("keys") }
        if let failure { return done(.fail(.keys(failure))) }
        guard let refreshToken = record.refreshToken else {
            return done(
                .fail(
                    .loginRequired(
                        account: record.account,
                        reason: "the access token expired and the provider issued no refresh token (include the offline_access scope)")))
        }
        phase = .refreshing(attempt: 1)
        return .refresh(refreshToken: refreshToken, record: record)
    }

    /// The token endpoint's answer; `rotated`: the new refresh token of an answer refused for
    /// something else.
    mutating func refreshed(_ result: Result<TokenResponse, TokenEndpointError>, rotated salvaged: String? = nil, now: Date) -> Effect {
        guard case .refreshing(let attempt) = phase, let original = record else { return unexpected("a refresh answer") }
        switch result {
        case .failure(let error) where error.isInvalidGrant:
            // A rotating refresh token may have been used by a process that did not take our
            // lock: read the store again before believing it.
            phase = .rereading(attempt: attempt, error)
            return .readRecord
        case .failure(let error):
            // The provider answered and rotated, but the answer was refused: keep the new
            // refresh token, record the problem, hand out nothing (as for a refused id_token).
            guard let salvaged, salvaged != original.refreshToken else { return done(.fail(.tokenEndpoint(error))) }
            self.now = now
            rotated = salvaged
            var kept = original
            kept.generation = RefreshStateMachine.nextGeneration(original.generation)
            kept.refreshToken = salvaged
            self.kept = kept
            return keepRefused(kept, .tokenEndpoint(error), original: original)
        case .success(let answer):
            self.now = now
            response = answer
            rotated = answer.refreshToken.flatMap { $0 == original.refreshToken ? nil : $0 }
            // 1. Another identity (claims read before their signature is checked, so nothing
            //    of another user's answer is ever written under this account).
            //    Only an id_token that names another issuer or subject is another identity's; one
            //    that names none is malformed, and its check below keeps the rotated token.
            if let idToken = answer.idToken, let claims = RefreshStateMachine.unverifiedClaims(idToken), let issuer = claims.issuer,
                let subject = claims.subject, issuer != original.issuer || subject != original.subject
            {
                phase = .revoking
                return .revoke(rotated, record: original)
            }
            // 2. The new refresh token goes into the one write that follows the checks.
            var kept = original
            kept.generation = RefreshStateMachine.nextGeneration(original.generation)
            if let rotated { kept.refreshToken = rotated }
            self.kept = kept
            // 2b. A bound sign-in's answer is DPoP, a bearer one's Bearer (RFC 9449 §5): another
            //     kind hands out nothing, and a rotated refresh token is kept all the same.
            let expected = original.isDPoP ? "DPoP" : "Bearer"
            guard answer.tokenType == expected else {
                let failure = AuthKitError.tokenEndpoint(.tokenTypeMismatch(asked: expected, answered: answer.tokenType))
                guard rotated != nil else { return done(.fail(failure)) }
                phase = .writingFailed(failure)
                written = kept
                return .write(kept)
            }
            if let idToken = answer.idToken {
                phase = .validating
                return .validateIDToken(idToken, record: original, jwksURI: jwksURI)
            }
            return writeUpdated()
        }
    }

    /// A new refresh token for another identity was revoked (or not).
    mutating func revoked(_ revoked: Bool) -> Effect {
        guard case .revoking = phase else { return unexpected("a revocation") }
        return done(.fail(.identityChanged(revokedNewRefreshToken: revoked)))
    }

    /// The new id_token's signature and claims were checked (or why not).
    mutating func idTokenValidated(_ result: Result<JWTClaims, AuthKitError>) -> Effect {
        guard case .validating = phase, let original = record, let kept, let idToken = response?.idToken else {
            return unexpected("an id_token check")
        }
        var failure: AuthKitError?
        switch result {
        case .success(let claims):
            if let reason = RefreshStateMachine.refreshRule(claims, original: original.idToken) { failure = .refreshRejected(reason) }
        case .failure(let error):
            failure = error
        }
        guard let failure else {
            verifiedIDToken = idToken
            return writeUpdated()
        }
        return keepRefused(kept, failure, original: original)
    }

    /// 3. Refused: keep the new refresh token, record the problem, hand out nothing; the next
    ///    request refreshes again.
    private mutating func keepRefused(_ kept: TokenRecord, _ failure: AuthKitError, original: TokenRecord) -> Effect {
        var failed = kept
        failed.refreshProblem = RefreshStateMachine.problemText(failure)
        failed.refreshProblemAt = now.timeIntervalSince1970
        guard rotated != nil || failed.refreshProblem != original.refreshProblem else { return done(.fail(failure)) }
        phase = .writingFailed(failure)
        written = failed
        return .write(failed)
    }

    /// The last ``Effect/write(_:)`` is done, or why it failed.
    mutating func written(_ failure: SecretStoreError? = nil) -> Effect {
        switch phase {
        // Saved or not, the pending record is the live one (it stays pending when not saved).
        case .restoring: return record.map { read($0, now: now) } ?? unexpected("a write")
        case .writingFailed(let error): if failure == nil { return done(.fail(error)) }
        case .writingUpdated(let token): if failure == nil { return done(.finish(token)) }
        default: return unexpected("a write")
        }
        guard let failure else { return unexpected("a write") }
        // A refresh token the provider did not rotate is still in the store: nothing is lost.
        guard rotated != nil, let record = written, let original = self.record else { return done(.fail(.storage(failure))) }
        phase = .keepingPending(failure)
        return .keepPending(record, replacing: original.generation)
    }

    /// The record whose write failed was kept in the pending place (or could not be).
    mutating func pendingKept(_ kept: Bool) -> Effect {
        guard case .keepingPending(let failure) = phase else { return unexpected("a pending save") }
        return done(.fail(.rotationNotSaved(failure, keptPending: kept)))
    }

    /// 4. Everything checked: store the answer whole, and hand out its access token — a
    ///    narrowed one only when it is as narrow as asked (else the new refresh token is kept and
    ///    nothing is handed out).
    private mutating func writeUpdated() -> Effect {
        guard let original = record, let kept, let response else { return unexpected("an answer to store") }
        var updated = kept
        if let verifiedIDToken, narrowing.isNone {
            updated.idToken = verifiedIDToken
            updated.idTokenVerifiedAt = now.timeIntervalSince1970
        }
        if let key = narrowing.cacheKey {
            if let problem = narrowing.problem(accessToken: response.accessToken, scopes: response.scopes, grant: original.scopes) {
                let failure = AuthKitError.notNarrowed(problem)
                guard rotated != nil else { return done(.fail(failure)) }
                phase = .writingFailed(failure)
                written = kept
                return .write(kept)
            }
            // Without the provider's expires_in, the hour it is handed out for (else every
            // request for it would refresh).
            let token = TokenRecord.ScopedToken(
                accessToken: response.accessToken, expiresAt: (response.expiresAt ?? now.addingTimeInterval(3600)).timeIntervalSince1970,
                scopes: response.scopes ?? narrowing.scopes ?? original.scopes,
                resources: narrowing.resources.isEmpty ? nil : narrowing.resources)
            updated.additionalTokens = updated.addingAdditionalToken(token, for: key, now: now.timeIntervalSince1970)
        } else {
            updated.accessToken = response.accessToken
            updated.accessTokenExpiresAt = response.expiresAt?.timeIntervalSince1970
            if let granted = response.scopes { updated.scopes = granted }
        }
        updated.refreshedAt = now.timeIntervalSince1970
        updated.refreshProblem = nil
        updated.refreshProblemAt = nil
        let token = AccessToken(
            value: response.accessToken, expiresAt: response.expiresAt ?? now.addingTimeInterval(3600),
            scopes: response.scopes ?? narrowing.scopes ?? original.scopes, account: original.account, refreshed: true,
            tokenType: original.tokenType ?? "Bearer", resources: narrowing.resources)
        phase = .writingUpdated(token)
        written = updated
        return .write(updated)
    }

    private func usable(_ record: TokenRecord, now: Date) -> AccessToken? {
        guard let token = RefreshStateMachine.usableToken(record, narrowing: narrowing, lifetime: minimumLifetime, now: now),
            token.value != rejected
        else {
            return nil
        }
        return token
    }

    private mutating func done(_ effect: Effect) -> Effect {
        phase = .done
        return effect
    }

    /// An event the machine did not ask for: a bug in the shell, reported, never trusted.
    private mutating func unexpected(_ what: String) -> Effect {
        done(.fail(.loginRequired(account: account, reason: "the refresh went wrong inside authkit (\(what) out of turn)")))
    }
}
