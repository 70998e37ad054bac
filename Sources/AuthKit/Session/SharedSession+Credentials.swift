import JOSE
import SecretStore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A verified id_token handed to a client that authenticates with one (a Kubernetes API server
/// configured with `--oidc-issuer-url`). The value is a secret: the description shows none.
public struct IDToken: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The id_token itself; never print or log it.
    public let value: String
    /// Its `exp`.
    public let expiresAt: Date
    /// The account it belongs to.
    public let account: String
    /// True when this call refreshed the sign-in to get it.
    public let refreshed: Bool

    public var description: String { "IDToken(\(account), expires \(Int(clamping: expiresAt.timeIntervalSince1970)))" }
    public var debugDescription: String { description }
}

extension SharedSession {
    /// Marks `value` stale when it is a token the sign-in holds (the main access token or a
    /// per-resource one): a server rejected it (git's `erase` after a 401), so the next request
    /// from any tool of the group refreshes instead of handing out the same token again.
    ///
    /// Never deletes, never revokes: a client's "erase" means "this credential was rejected",
    /// not "sign out". A value the sign-in does not hold (an old token, someone else's) changes
    /// nothing. Returns true when a token was marked.
    @discardableResult
    public func markRejected(accessToken value: String, account: String? = nil) async throws(AuthKitError) -> Bool {
        guard !value.isEmpty else { return false }
        let held = try await acquireLock()
        defer { held.release() }
        let entries = try await records().filter { Self.matches($0.item.key, account: account) }
        let past = clock().timeIntervalSince1970 - 1
        for entry in entries {
            guard case .success(var record) = entry.record else { continue }
            var changed = false
            if record.accessToken == value {
                record.accessTokenExpiresAt = min(record.accessTokenExpiresAt ?? past, past)
                changed = true
            }
            for (scopes, token) in record.additionalTokens ?? [:] where token.accessToken == value {
                record.additionalTokens?[scopes]?.expiresAt = past
                changed = true
            }
            guard changed else { continue }
            record.generation = Self.nextGeneration(record.generation)
            try await write(record, for: entry.item.key)
            logger.debug("a rejected access token was marked stale", metadata: ["account": "\(record.account)"])
            return true
        }
        return false
    }

    /// A verified id_token that lives at least `minimumLifetime`: the stored one while it
    /// does, else one from a refresh (the same single refresh path every tool shares, which
    /// verifies the new id_token before storing it).
    ///
    /// The stored id_token was verified when it was stored (`TokenRecord/idTokenVerifiedAt`);
    /// only its `exp` is read here. A provider that sends no id_token on refresh cannot meet a
    /// lifetime longer than the stored one has left: ``AuthKitError/unsupported(_:)`` says so.
    public func validIDToken(account: String? = nil, minimumLifetime: Duration = .seconds(60)) async throws(AuthKitError) -> IDToken {
        let (_, record) = try await select(account: account)
        if let token = Self.usableIDToken(record, lifetime: minimumLifetime, now: clock()) { return token }
        // A refresh through the shared path, forced even if the access token is still good.
        let current = AccessToken(
            value: record.accessToken, expiresAt: record.accessTokenExpiry, scopes: record.scopes, account: record.account,
            refreshed: false)
        _ = try await validAccessToken(account: account ?? record.account, minimumLifetime: minimumLifetime, replacing: current)
        let (_, renewed) = try await select(account: account ?? record.account)
        guard let token = Self.usableIDToken(renewed, lifetime: minimumLifetime, now: clock()) else {
            throw .unsupported(
                "the provider's id_token for \(renewed.account) does not live \(minimumLifetime.components.seconds) s more even after a refresh "
                    + "(the provider may not send id_tokens on refresh); lower --min-ttl or sign in again")
        }
        return IDToken(value: token.value, expiresAt: token.expiresAt, account: token.account, refreshed: true)
    }

    static func usableIDToken(_ record: TokenRecord, lifetime: Duration, now: Date) -> IDToken? {
        guard let idToken = record.idToken, record.idTokenVerifiedAt != nil, let claims = unverifiedClaims(idToken),
            let expiry = claims.expirationSeconds, expiry.isFinite
        else { return nil }
        guard expiry - now.timeIntervalSince1970 >= Double(lifetime.components.seconds) else { return nil }
        return IDToken(value: idToken, expiresAt: Date(timeIntervalSince1970: expiry), account: record.account, refreshed: false)
    }
}

extension SharedSession {
    /// Checks that the store can be reached now — a session bus and a Secret Service, the
    /// kernel keyring not blocked, the plain file's directory private — so that `login` fails
    /// in a second, before the person consents in a browser, rather than after (issue 13). A
    /// locked collection is unlocked now, through the provider's prompt (on a desktop the
    /// prompt comes before the browser); where no prompt can be shown, that is the error.
    @discardableResult
    public func checkStore() async throws(AuthKitError) -> StorageStatus {
        do {
            return try await store.prepareToSave(in: group)
        } catch {
            throw .storage(error)
        }
    }
}
