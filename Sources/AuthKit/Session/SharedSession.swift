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
    /// The DPoP keys of the group's sign-ins.
    let dpopKeys: DPoPKeyItems
    /// The agent asked before the store (``AgentClient``), when one is configured and the
    /// store is one the agent can name.
    let agent: AgentRoute?
    /// Debug-level notes on what the session does (never a token): set `AUTHKIT_LOG=debug`
    /// for the `authkit` command, or give your own logger.
    public let logger: Logger

    /// The store the `authkit` command would use for `group` when no flag or configuration
    /// names one: the one `AUTHKIT_STORAGE` names (`secret-service`, `kernel-keyring`,
    /// `plain-file`), else the one the group's last sign-in was saved to when that was not the
    /// Secret Service (`authkit login --storage kernel-keyring` records it), else the Secret
    /// Service. The default of ``init(group:store:transport:environment:lockTimeout:logger:clock:)``,
    /// so a tool that names only the group finds the sign-in wherever the user keeps it.
    ///
    /// The Secret Service store it returns causes no dialog (`SecretServiceStore.PromptPolicy.never`):
    /// a tool refreshing in the background never prompts, and a locked keyring is
    /// ``AuthKitError/storage(_:)`` with `SecretStoreError.locked`. A tool a person
    /// runs at a terminal that wants the keyring's unlock dialog passes
    /// `store: SecretServiceStore(prompts: .unlock)`.
    public static func defaultStore(
        group: String? = nil, environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> any SecretStore {
        if let named = environment["AUTHKIT_STORAGE"].flatMap(StorageChoice.init(rawValue:)) { return named.makeStore() }
        if let group, let recorded = StorageRecord.choice(for: group, environment: environment) { return recorded.makeStore() }
        return SecretServiceStore()
    }

    /// A session sharing the sign-in of `group` with every other tool that names it.
    ///
    /// - Parameters:
    ///   - group: the group name every sharing tool uses, e.g. `com.example.shared`.
    ///   - store: where tokens live; by default ``defaultStore(group:environment:)``:
    ///     `AUTHKIT_STORAGE`, else where the group's sign-in was saved, else the Secret Service.
    ///   - transport: how refresh and revocation requests are sent.
    ///   - environment: for the lock directory (`XDG_RUNTIME_DIR`, `TMPDIR`).
    ///   - lockTimeout: how long to wait for another process's refresh of the group.
    ///   - logger: where the session says what it does (never a token).
    ///   - clock: the time used for expiry decisions.
    public init(
        group: String,
        store: (any SecretStore)? = nil,
        transport: any HTTPTransport = CurlHTTPTransport(),
        environment: [String: String] = ProcessInfo.processInfo.environment,
        lockTimeout: Duration = .seconds(60),
        logger: Logger = Logger(label: "authkit"),
        clock: @escaping @Sendable () -> Date = { Date() }
    ) throws(AuthKitError) {
        do { self.group = try SecretGroup(group) } catch { throw .storage(error) }
        let store = store ?? Self.defaultStore(group: group, environment: environment)
        self.store = store
        self.transport = transport
        self.environment = environment
        self.clock = clock
        self.lockTimeout = lockTimeout
        self.keys = JWKSCache(transport: transport, clock: clock, logger: logger)
        self.logger = logger
        self.agent = AgentRoute(store: store, environment: environment)
        self.dpopKeys = DPoPKeyItems(store: store, environment: environment)
    }

    /// The endpoints stored sign-ins name, reached through this session's transport.
    var endpoints: RecordEndpoints { RecordEndpoints(transport: transport, clock: clock) }

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
    ///   - scopes: other scopes than those of the sign-in, or fewer (obtained with the refresh
    ///     token and kept beside the main token). Fewer scopes must come back fewer:
    ///     ``AuthKitError/notNarrowed(_:)`` otherwise.
    ///   - resources: the APIs the token is for (RFC 8707): the provider's token must name only
    ///     them as its audience, else ``AuthKitError/notNarrowed(_:)``.
    ///   - rejected: a token a server just refused (HTTP 401) although it had not expired:
    ///     it is refreshed unless another process has already replaced it.
    public func validAccessToken(
        account: String? = nil, minimumLifetime: Duration = .seconds(60), scopes: [String]? = nil, resources: [String] = [],
        replacing rejected: AccessToken? = nil
    ) async throws(AuthKitError) -> AccessToken {
        if let agent,
            let token = try await agent.accessToken(
                self, account: account, minimumLifetime: minimumLifetime, scopes: scopes, resources: resources, replacing: rejected)
        {
            return token
        }
        let (item, record) = try await select(account: account)
        let narrowing = TokenNarrowing(scopes: scopes, resources: resources, granted: record.scopes)
        if let token = RefreshStateMachine.usableToken(record, narrowing: narrowing, lifetime: minimumLifetime, now: clock()),
            token.value != rejected?.value
        {
            logger.debug(
                "access token from the store",
                metadata: [
                    "account": "\(record.account)", "expires_in_s": "\(Int(clamping: token.expiresAt.timeIntervalSince(clock())))",
                ])
            return token
        }
        logger.debug(
            "access token needs a refresh",
            metadata: [
                "account": "\(record.account)", "narrowing": "\(narrowing)",
                "reason": "\(rejected == nil ? "expires within \(minimumLifetime)" : "rejected by a server")",
            ])
        let key = item.key
        let flightKey =
            "\(group.name)\u{0}\(key.issuer)\u{0}\(key.clientID)\u{0}\(key.account)\u{0}\(narrowing.cacheKey ?? "")\u{0}\(rejected == nil ? "" : "replace")"
        let result = await RefreshCoordinator.shared.run(flightKey) {
            do throws(AuthKitError) {
                return .success(
                    try await RefreshShell(session: self).run(
                        key: key, narrowing: narrowing, minimumLifetime: minimumLifetime, rejected: rejected?.value))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    // MARK: Writing

    /// Stores a sign-in (used by ``SignInFlow``) and its DPoP key, replacing the account's
    /// previous record and key.
    /// Takes the group's refresh lock, so a refresh under way in another process cannot write
    /// its older tokens over the new sign-in.
    /// - Returns: where it went, and what a person should know (the storage record not kept).
    @discardableResult
    package func save(_ record: TokenRecord, dpopKey: DPoPKey? = nil) async throws(AuthKitError) -> (StorageLocation, warnings: [String]) {
        let key = itemKey(for: record)
        let location: StorageLocation
        do {
            let held = try await acquireLock()
            defer { held.release() }
            // The key first: a record is never stored bound to a key that is not there; an
            // earlier sign-in's key goes once a bearer record replaced it.
            if let dpopKey { try await dpopKeys.save(dpopKey, for: key) }
            location = try await write(record, for: key)
            await dpopKeys.removeOthers(than: dpopKey?.thumbprint, for: key)
        }
        await agent?.forget(group: group.name)
        // Later commands look here without being told (StorageRecord), and name the whole
        // login in their hints, also after a sign-out (LoginRecord).
        var warnings: [String] = []
        if let choice = StorageChoice(store: store) {
            do { try StorageRecord.record(choice, for: group.name, environment: environment) } catch {
                warnings.append(StorageRecord.warning(error, choice: choice))
            }
        }
        do {
            try LoginRecord.record(
                LoginRecord.Entry(issuer: record.configuredIssuer, clientID: key.clientID), for: group.name, environment: environment)
        } catch {
            logger.debug("could not record how the group signed in", metadata: ["path": "\(error.path)", "reason": "\(error.reason)"])
        }
        return (location, warnings)
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
                let key = try? await dpopKeys.key(for: record, at: entry.item.key)
                revocation = await endpoints.revoke(record.refreshToken, for: record, key: key ?? nil)
            }
            let removed: Bool
            do throws(SecretStoreError) { removed = try await store.delete(entry.item.key) } catch { throw .storage(error) }
            await removeDerived(of: entry.item.key)
            var issuer = entry.item.key.issuer
            if case .success(let record) = entry.record { issuer = record.configuredIssuer }
            outcomes.append(
                SignOutOutcome(
                    account: entry.item.key.account, revocation: revocation, removed: removed, issuer: issuer,
                    clientID: entry.item.key.clientID))
        }
        if account == nil {
            // Also whatever could not even be listed as ours (corrupt attributes).
            do throws(SecretStoreError) { _ = try await store.deleteAll(in: group) } catch { throw .storage(error) }
            PendingSave.forgetAll(in: group)
        }
        await agent?.forget(group: group.name)
        dpopKeys.forgetCached()
        if let choice = StorageChoice(store: store), (try? await records().isEmpty) == true {
            try? StorageRecord.forget(group.name, storedIn: choice, environment: environment)
        }
        return outcomes
    }

    /// Removes what was derived from a sign-in and kept beside it (AWS credentials, the
    /// current-account mark, a pending record): it goes with the sign-in.
    private func removeDerived(of key: ItemKey) async {
        let query = ItemQuery(group: group, issuer: key.issuer, clientID: key.clientID, account: key.account)
        PendingSave.forget(key)
        guard let items = try? await store.items(matching: query, loadSecrets: false) else { return }
        for item in items where ItemKind.isDerived(stored: item.key.kind) {
            _ = try? await store.delete(item.key)
        }
    }

    /// Checks that the store can be reached now — a session bus and a Secret Service, the
    /// kernel keyring not blocked, the plain file's directory private — so that `login` fails
    /// in a second, before the person consents in a browser, rather than after. A
    /// locked collection is unlocked now, through the provider's prompt (on a desktop the
    /// prompt comes before the browser); where no prompt can be shown, that is the error.
    @discardableResult
    public func checkStore() async throws(AuthKitError) -> StorageStatus {
        do { return try await store.prepareToSave(in: group) } catch { throw .storage(error) }
    }
}
