import SecretStore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The shared sessions an agent reads tokens through: one per group and store, kept for the
/// agent's life (their key-set caches with them). Every refresh goes through the one refresh
/// path (``SharedSession/validAccessToken(account:minimumLifetime:scopes:resources:replacing:)``), so the
/// agent and tools without it share a single refresh.
package actor AgentSessions {
    private let environment: [String: String]
    private var sessions: [String: SharedSession] = [:]

    /// `environment` is the one the sessions see; for the user's own agent it says
    /// `AUTHKIT_AGENT=off`, so a session never asks the agent it serves. A forwarding agent
    /// keeps the user's agent, if any.
    package init(environment: [String: String]) {
        self.environment = environment
    }

    func session(group: String, storage: StorageChoice) throws(AuthKitError) -> SharedSession {
        let name = storage.rawValue + "\u{0}" + group
        if let session = sessions[name] { return session }
        let session = try SharedSession(group: group, store: storage.makeStore(), environment: environment)
        sessions[name] = session
        return session
    }

    /// A proof signed with the key of the sign-in `request` names (never the key itself).
    func sign(_ request: AgentProofRequest, storage: StorageChoice) async -> Result<String, AgentFailure> {
        do throws(AuthKitError) {
            let session = try session(group: request.token.group, storage: storage)
            return .success(try await ResourceRequest.localProof(request.proof, session: session, account: request.token.account))
        } catch {
            return .failure(AgentFailure(error))
        }
    }

    func fetch(_ key: AgentStateMachine.Key, minTTL: Int) async -> Result<AgentStateMachine.Token, AgentFailure> {
        do throws(AuthKitError) {
            let session = try session(group: key.group, storage: key.storage)
            if key.idToken {
                let token = try await session.validIDToken(account: key.account, minimumLifetime: .seconds(minTTL))
                return .success(
                    AgentStateMachine.Token(
                        value: token.value, expiresAt: Int64(token.expiresAt.timeIntervalSince1970), account: token.account,
                        scopes: [], refreshed: token.refreshed))
            }
            let token = try await session.validAccessToken(
                account: key.account, minimumLifetime: .seconds(minTTL), scopes: key.scopes.isEmpty ? nil : key.scopes,
                resources: key.resources)
            var served = AgentStateMachine.Token(
                value: token.value, expiresAt: Int64(token.expiresAt.timeIntervalSince1970), account: token.account,
                scopes: token.scopes, refreshed: token.refreshed, tokenType: token.tokenType == "DPoP" ? "DPoP" : nil)
            served.resources = token.resources
            return .success(served)
        } catch {
            return .failure(AgentFailure(error))
        }
    }

    func markRejected(_ token: String, group: String, storage: StorageChoice) async {
        do throws(AuthKitError) {
            _ = try await session(group: group, storage: storage).markRejected(accessToken: token)
        } catch {}
    }
}
