import SecretStore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

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
        if let agent, await agent.markRejected(self, accessToken: value) { return true }
        let held = try await acquireLock()
        defer { held.release() }
        let entries = try await records().filter { Self.matches($0.item.key, account: account) }
        let past = clock().timeIntervalSince1970 - 1
        for entry in entries {
            guard case .success(let stored) = entry.record else { continue }
            // A rotated refresh token the store refused is built on, never overwritten.
            var record = PendingRecord.find(entry.item.key, current: stored, logger: logger) ?? stored
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
            record.generation = RefreshStateMachine.nextGeneration(record.generation)
            try await write(record, for: entry.item.key)
            logger.debug("a rejected access token was marked stale", metadata: ["account": "\(record.account)"])
            return true
        }
        return false
    }
}
