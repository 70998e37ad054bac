import JOSE
import SecretStore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The one refresh path every tool of a group shares (see ``SharedSession``): the I/O shell
/// of ``RefreshStateMachine`` for one session.
struct RefreshShell {
    let session: SharedSession

    /// The refresh under the group's lock: ``RefreshStateMachine`` decides, this performs what
    /// it asks (reads, key fetches, the token endpoint, validation, writes) and feeds back the
    /// results.
    func run(key: ItemKey, narrowing: TokenNarrowing, minimumLifetime: Duration, rejected: String?) async throws(AuthKitError)
        -> AccessToken
    {
        let (group, logger, keys, clock) = (session.group, session.logger, session.keys, session.clock)
        let held = try await session.acquireLock()
        defer { held.release() }
        var machine = RefreshStateMachine(
            group: group.name, account: key.account, narrowing: narrowing, minimumLifetime: minimumLifetime, rejected: rejected)
        var effect = machine.first
        var rereads = 0
        while true {
            switch effect {
            case .readRecord:
                // Another process may have refreshed (or signed out) while we waited.
                if rereads > 0 { logger.debug("refresh token refused (invalid_grant); reading the store again") }
                rereads += 1
                let current = try await session.readRecord(key)
                effect = machine.recordRead(current, pending: PendingRecord.find(key, current: current, logger: logger), now: clock())
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
                        "token_endpoint": "\(record.tokenEndpoint.url.redactedOrigin)",
                        "generation": "\(record.generation)",
                    ])
                let proof = try await session.dpopKeys.key(for: record, at: key)
                let client = session.endpoints.tokenClient(for: record, key: proof)
                switch await client.refreshAnswer(refreshToken, scopes: narrowing.scopes, resources: narrowing.resources) {
                case .tokens(let tokens): effect = machine.refreshed(.success(tokens), now: clock())
                case .refused(let error, let rotated): effect = machine.refreshed(.failure(error), rotated: rotated, now: clock())
                }
            case .revoke(let rotated, let record):
                let proof = try? await session.dpopKeys.key(for: record, at: key)
                let revoked = await session.endpoints.revoke(rotated, for: record, key: proof ?? nil) == .revoked
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
                do throws(AuthKitError) {
                    try await session.write(record, for: key)
                    effect = machine.written()
                } catch .storage(let failure) {
                    effect = machine.written(failure)
                }
            case .keepPending(let record, let replacing):
                effect = machine.pendingKept(PendingRecord.keep(record, for: key, replacing: replacing, logger: logger))
            case .finish(let token):
                logger.debug(token.refreshed ? "refreshed and stored" : "another process refreshed meanwhile")
                return token
            case .fail(let error):
                throw error
            }
        }
    }
}
