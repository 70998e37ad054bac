import JOSE
import Logging
import SecretStore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One shared sign-in, as every tool that names the same group sees it.
///
/// ```swift
/// let session = try SharedSession(group: "com.example.shared")
/// let token = try await session.validAccessToken(minimumLifetime: .seconds(120))
/// request.setValue("Bearer \(token.value)", forHTTPHeaderField: "Authorization")
/// ```
///
/// * Reading is one Secret Service round trip; a token that lives long enough is returned
///   without network, discovery or keys.
/// * Otherwise the token is refreshed — once per group at a time across processes (a
///   `flock`, see ``RefreshLock``) and within the process (single flight). Under the lock the
///   store is read again, and the refresh happens only if the token is still stale: sixteen
///   tools asking at once cause one refresh.
/// * A refresh token the provider rejects (`invalid_grant`) is only believed dead after
///   reading the store again: another process may have just rotated it.
/// * Nothing here deletes a sign-in except ``signOut(account:)``.
public final class SharedSession: Sendable {
    /// The group whose sign-in this session shares.
    public let group: SecretGroup
    package let store: any SecretStore
    package let transport: any HTTPTransport
    let environment: [String: String]
    let clock: @Sendable () -> Date
    let keys: JWKSCache
    let lockTimeout: Duration
    /// Debug-level notes on what the session does (never a token): set `AUTHKIT_LOG=debug`
    /// for the `authkit` command, or give your own logger.
    public let logger: Logger

    /// The store `AUTHKIT_STORAGE` names, as the `authkit` command picks it: `kernel-keyring`
    /// (`KernelKeyringStore`), `plain-file` (`PlainFileStore`), else the Secret Service.
    /// The default of ``init(group:store:transport:environment:lockTimeout:logger:clock:)``,
    /// so a tool that names only the group finds the sign-in wherever the user keeps it.
    public static func defaultStore(environment: [String: String] = ProcessInfo.processInfo.environment) -> any SecretStore {
        switch environment["AUTHKIT_STORAGE"] {
        case "kernel-keyring": return KernelKeyringStore()
        case "plain-file": return PlainFileStore()
        default: return SecretServiceStore()
        }
    }

    /// A session sharing the sign-in of `group` with every other tool that names it.
    ///
    /// - Parameters:
    ///   - group: the group name every sharing tool uses, e.g. `com.example.shared`.
    ///   - store: where tokens live; by default the store `AUTHKIT_STORAGE` names
    ///     (``defaultStore(environment:)``), else the Secret Service.
    ///   - transport: how refresh and revocation requests are sent.
    ///   - environment: for the lock directory (`XDG_RUNTIME_DIR`, `TMPDIR`).
    ///   - lockTimeout: how long to wait for another process's refresh of the group.
    ///   - logger: where the session says what it does (never a token).
    ///   - clock: the time used for expiry decisions.
    public init(
        group: String,
        store: any SecretStore = SharedSession.defaultStore(),
        transport: any HTTPTransport = CurlHTTPTransport(),
        environment: [String: String] = ProcessInfo.processInfo.environment,
        lockTimeout: Duration = .seconds(60),
        logger: Logger = Logger(label: "authkit"),
        clock: @escaping @Sendable () -> Date = { Date() }
    ) throws(AuthKitError) {
        do { self.group = try SecretGroup(group) } catch { throw .storage(error) }
        self.store = store
        self.transport = transport
        self.environment = environment
        self.clock = clock
        self.lockTimeout = lockTimeout
        self.keys = JWKSCache(transport: transport, clock: clock, logger: logger)
        self.logger = logger
    }

    // MARK: Reading

    /// The accounts signed in within the group, most recent first. Records that cannot be
    /// read are listed with ``Account/problem`` set (and left in place).
    public func accounts() async throws(AuthKitError) -> [Account] {
        try await records().map { entry in
            switch entry.record {
            case .success(let record): return Account(record: record, location: entry.item.location)
            case .failure(let reason): return Account(unreadable: entry.item, reason: reason.description)
            }
        }
    }

    /// An access token that lives at least `minimumLifetime`, refreshed if needed.
    ///
    /// - Parameters:
    ///   - account: which account, when the group holds several; by default the one that
    ///     signed in most recently.
    ///   - minimumLifetime: how long the token must still be valid; a shorter one is refreshed.
    ///   - scopes: other scopes than those of the sign-in (obtained with the refresh token and
    ///     kept beside the main token).
    ///   - rejected: a token a server just refused (HTTP 401) although it had not expired:
    ///     it is refreshed unless another process has already replaced it.
    public func validAccessToken(
        account: String? = nil, minimumLifetime: Duration = .seconds(60), scopes: [String]? = nil,
        replacing rejected: AccessToken? = nil
    ) async throws(AuthKitError) -> AccessToken {
        let (item, record) = try await select(account: account)
        let wanted = Self.normalized(scopes, granted: record.scopes)
        if let token = Self.usableToken(record, scopes: wanted, lifetime: minimumLifetime, now: clock()),
            token.value != rejected?.value
        {
            logger.debug("access token from the store", metadata: [
                "account": "\(record.account)", "expires_in_s": "\(Int(clamping: token.expiresAt.timeIntervalSince(clock())))"])
            return token
        }
        logger.debug("access token needs a refresh", metadata: [
            "account": "\(record.account)", "reason": "\(rejected == nil ? "expires within \(minimumLifetime)" : "rejected by a server")"])
        let key = item.key
        let flightKey = "\(group.name)\u{0}\(key.issuer)\u{0}\(key.clientID)\u{0}\(key.account)\u{0}\(wanted?.joined(separator: " ") ?? "")\u{0}\(rejected == nil ? "" : "replace")"
        let result = await RefreshCoordinator.shared.run(flightKey) {
            do throws(AuthKitError) {
                return .success(try await self.refreshUnderLock(
                    key: key, scopes: wanted, minimumLifetime: minimumLifetime, rejected: rejected?.value))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    // MARK: Writing

    /// Stores a sign-in (used by ``SignInFlow``), replacing the account's previous record.
    /// Takes the group's refresh lock, so a refresh under way in another process cannot write
    /// its older tokens over the new sign-in.
    @discardableResult
    package func save(_ record: TokenRecord) async throws(AuthKitError) -> StorageLocation {
        let key = itemKey(for: record)
        let held = try await acquireLock()
        defer { held.release() }
        return try await write(record, for: key)
    }

    /// The outcome of signing one account out.
    public struct SignOutOutcome: Sendable {
        /// What became of the refresh token at the provider.
        public enum Revocation: Sendable, Equatable {
            /// Revoked (RFC 7009).
            case revoked
            /// The provider advertises no revocation endpoint, or there was no refresh token.
            case notSupported
            /// Revocation was attempted and failed; the local sign-in is removed all the same.
            case failed(String)
        }

        /// The account signed out.
        public var account: String
        /// What became of its refresh token at the provider.
        public var revocation: Revocation
        /// Whether a stored item was removed.
        public var removed: Bool
        /// The issuer the sign-in was made with, as configured (a `{tenantid}` template stays
        /// one) — what signs in again.
        public var issuer: String
        /// The client id the sign-in was made with.
        public var clientID: String
    }

    /// Signs out `account` (or everybody in the group when nil): revokes each refresh token
    /// where the provider supports it (RFC 7009), then removes the items. Idempotent: signing
    /// out nobody returns an empty list. Other tools of the group see the sign-out at once.
    ///
    /// Holds the group's refresh lock throughout: a refresh under way in another process
    /// finishes first (and its new refresh token is the one revoked), or finds the sign-in gone;
    /// it never writes it back.
    public func signOut(account: String? = nil) async throws(AuthKitError) -> [SignOutOutcome] {
        let held = try await acquireLock()
        defer { held.release() }
        let entries = try await records()
        let chosen = entries.filter { account == nil || Self.matches($0.item.key, account: account) }
        var outcomes: [SignOutOutcome] = []
        for entry in chosen {
            var revocation = SignOutOutcome.Revocation.notSupported
            if case .success(let record) = entry.record {
                revocation = await revoke(record)
            }
            let removed: Bool
            do throws(SecretStoreError) { removed = try await store.delete(entry.item.key) } catch { throw .storage(error) }
            var issuer = entry.item.key.issuer
            if case .success(let record) = entry.record { issuer = record.configuredIssuer }
            outcomes.append(SignOutOutcome(
                account: entry.item.key.account, revocation: revocation, removed: removed, issuer: issuer, clientID: entry.item.key.clientID))
        }
        if account == nil {
            // Also whatever could not even be listed as ours (corrupt attributes).
            do throws(SecretStoreError) { _ = try await store.deleteAll(in: group) } catch { throw .storage(error) }
        }
        return outcomes
    }

    // MARK: Internals

    /// Encodes `record` and stores it under `key` (one item, replaced whole).
    @discardableResult
    func write(_ record: TokenRecord, for key: ItemKey) async throws(AuthKitError) -> StorageLocation {
        let bytes: [UInt8]
        do throws(TokenRecord.RecordError) { bytes = try record.encoded() } catch {
            throw .corruptRecord(account: record.account, reason: error.description)
        }
        do {
            return try await store.save(bytes, for: key, label: key.defaultLabel)
        } catch {
            throw .storage(error)
        }
    }

    typealias Entry = (item: StoredItem, record: Result<TokenRecord, RecordProblem>)

    /// Why a stored item could not be read as a record.
    struct RecordProblem: Error, CustomStringConvertible {
        var description: String
    }

    func itemKey(for record: TokenRecord) -> ItemKey {
        ItemKey(group: group, issuer: record.issuer, clientID: record.clientID, account: record.account, kind: TokenRecord.kind)
    }

    /// Every token item of the group with its decoded record, most recent first.
    func records() async throws(AuthKitError) -> [Entry] {
        let items: [StoredItem]
        do {
            items = try await store.items(matching: ItemQuery(group: group, kind: TokenRecord.kind), loadSecrets: true)
        } catch {
            throw .storage(error)
        }
        let entries: [Entry] = items.map { item in
            do throws(SecretStoreError) {
                let secret = try item.validatedSecret()
                do throws(TokenRecord.RecordError) {
                    return (item, .success(try TokenRecord.decode(secret)))
                } catch {
                    return (item, .failure(RecordProblem(description: error.description)))
                }
            } catch {
                let reason = item.location.isLocked ? "the collection is locked" : (item.problem?.description ?? error.description)
                return (item, .failure(RecordProblem(description: reason)))
            }
        }
        return entries.sorted { lhs, rhs in
            (try? lhs.record.get().signedInAt) ?? 0 > (try? rhs.record.get().signedInAt) ?? 0
        }
    }

    static func matches(_ key: ItemKey, account: String?) -> Bool {
        guard let account else { return true }
        return key.account == account || key.account.lowercased() == account.lowercased()
    }

    /// The account to use: the named one, else the most recently signed in.
    func select(account: String?) async throws(AuthKitError) -> (StoredItem, TokenRecord) {
        let entries = try await records().filter { Self.matches($0.item.key, account: account) }
        guard let first = entries.first(where: { (try? $0.record.get()) != nil }) ?? entries.first else {
            throw .notSignedIn(group: group.name, account: account)
        }
        switch first.record {
        case .success(let record): return (first.item, record)
        case .failure(let reason):
            if first.item.location.isLocked {
                throw .storage(.locked(collection: first.item.location.description))
            }
            throw .corruptRecord(account: first.item.key.account, reason: reason.description)
        }
    }

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

    private func readRecord(_ key: ItemKey) async throws(AuthKitError) -> TokenRecord? {
        let item: StoredItem?
        do { item = try await store.item(for: key) } catch { throw .storage(error) }
        guard let item else { return nil }
        do {
            return try TokenRecord.decode(try item.validatedSecret())
        } catch let error as TokenRecord.RecordError {
            throw .corruptRecord(account: key.account, reason: error.description)
        } catch let error as SecretStoreError {
            throw .storage(error)
        } catch {
            throw .corruptRecord(account: key.account, reason: "\(error)")
        }
    }

    /// The group's cross-process lock (see ``RefreshLock``), held by refreshes, sign-in writes
    /// and sign-outs.
    func acquireLock() async throws(AuthKitError) -> RefreshLock.Held {
        let lock: RefreshLock
        do { lock = try RefreshLock(group: group.name, environment: environment) } catch { throw .lock(error) }
        let start = ContinuousClock.now
        let held: RefreshLock.Held
        do { held = try await lock.acquire(timeout: lockTimeout) } catch { throw .lock(error) }
        logger.debug("holding the group's lock", metadata: ["path": "\(lock.path)", "waited": "\(ContinuousClock.now - start)"])
        return held
    }

    private func refreshUnderLock(key: ItemKey, scopes: [String]?, minimumLifetime: Duration, rejected: String?) async throws(AuthKitError) -> AccessToken {
        let held = try await acquireLock()
        defer { held.release() }

        // Another process may have refreshed (or signed out) while we waited.
        guard var record = try await readRecord(key) else { throw .notSignedIn(group: group.name, account: key.account) }
        if let token = Self.usableToken(record, scopes: scopes, lifetime: minimumLifetime, now: clock()), token.value != rejected {
            logger.debug("another process refreshed meanwhile", metadata: ["generation": "\(record.generation)"])
            return token
        }
        guard let jwksURI = URL(string: record.jwksURI) else { throw .corruptRecord(account: record.account, reason: "its jwks_uri is invalid") }
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
                logger.debug("refreshing", metadata: [
                    "token_endpoint": "\(URL(string: record.tokenEndpoint)?.redactedOrigin ?? "?")", "generation": "\(record.generation)"])
                response = try await tokenClient(for: record).refresh(refreshToken, scopes: scopes)
            } catch where error.isInvalidGrant {
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

    /// What happens to a refresh answer once the provider has given it (issue 14, SECURITY.md
    /// "What a refresh keeps"). A rotating provider has used up the old refresh token by now,
    /// so the new one is stored before anything that can fail; what is handed out is decided
    /// after the checks.
    private func accept(
        _ response: TokenResponse, for original: TokenRecord, key: ItemKey, scopes: [String]?, jwksURI: URL
    ) async throws(AuthKitError) -> AccessToken {
        let now = clock()
        let rotated = response.refreshToken.flatMap { $0 == original.refreshToken ? nil : $0 }

        // 1. Another identity (read from the claims before their signature is checked, so that
        //    nothing of another user's answer is ever written under this account).
        if let idToken = response.idToken, let claims = Self.unverifiedClaims(idToken),
            claims.issuer != original.issuer || claims.subject != original.subject
        {
            let revoked = await revokeAnswer(rotated, for: original)
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
                let validated = try await keys.validate(idToken, validator: validator, jwksURI: jwksURI, nonce: nil, refetchWithinCooldown: true)
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
        logger.debug("refreshed and stored", metadata: [
            "generation": "\(updated.generation)", "refresh_token_rotated": "\(rotated != nil)",
            "expires_in_s": "\(response.expiresIn.map(String.init) ?? "?")"])
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

    /// Revokes a refresh token that another user's answer carried (RFC 7009), where the
    /// provider offers revocation. True when it was revoked.
    private func revokeAnswer(_ refreshToken: String?, for record: TokenRecord) async -> Bool {
        guard let refreshToken, let endpoint = record.revocationEndpoint.flatMap(URL.init(string:)) else { return false }
        var client = tokenClient(for: record)
        client.timeout = .seconds(10)
        do {
            try await RevocationClient(endpoint: endpoint, tokenClient: client).revoke(refreshToken)
            return true
        } catch {
            return false
        }
    }

    func tokenClient(for record: TokenRecord) -> TokenEndpointClient {
        TokenEndpointClient(
            endpoint: URL(string: record.tokenEndpoint) ?? URL(fileURLWithPath: "/"),
            client: OAuthClient(clientID: record.clientID, clientSecret: record.clientSecret.map(ClientSecret.init)),
            authMethodsSupported: record.tokenEndpointAuthMethods, transport: transport, clock: clock)
    }

    private func revoke(_ record: TokenRecord) async -> SignOutOutcome.Revocation {
        guard let endpoint = record.revocationEndpoint.flatMap(URL.init(string:)), let refreshToken = record.refreshToken else {
            return .notSupported
        }
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

/// One process-wide single flight per account and scope set: concurrent callers in one
/// process share one refresh.
actor RefreshCoordinator {
    static let shared = RefreshCoordinator()
    private var running: [String: Task<Result<AccessToken, AuthKitError>, Never>] = [:]

    func run(_ key: String, _ work: @escaping @Sendable () async -> Result<AccessToken, AuthKitError>) async
        -> Result<AccessToken, AuthKitError>
    {
        if let task = running[key] { return await task.value }
        let task = Task { await work() }
        running[key] = task
        let result = await task.value
        running[key] = nil
        return result
    }
}
