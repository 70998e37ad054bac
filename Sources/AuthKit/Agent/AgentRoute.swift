import AuthKitCore
import SecretStore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#endif

/// How a session reaches the authkit agent: its client, and the name of the session's store
/// on the wire. A session whose store the agent cannot name (a tool's own store) has none.
package struct AgentRoute: Sendable {
    let client: AgentClient
    let storage: StorageChoice
    /// The program a token is for when authkit runs it (`exec`): a key of the session's own
    /// environment dictionary, which `exec` sets and never exports; not a variable's name, so
    /// no environment can set it.
    package static let programKey = "authkit.exec-program"

    init?(store: any SecretStore, environment: [String: String]) {
        guard let choice = StorageChoice(store: store), let client = AgentClient(environment: environment) else { return nil }
        self.client = client
        self.storage = choice
    }

    /// The agent's access token, its failure as the error the store would have given, or nil
    /// when there is no agent to ask (the caller reads the store).
    func accessToken(
        _ session: SharedSession, account: String?, minimumLifetime: Duration, scopes: [String]?, resources: [String],
        replacing rejected: AccessToken?
    ) async throws(AuthKitError) -> AccessToken? {
        if let rejected {
            // Marked stale first, so the token asked for next is a new one.
            guard await markRejected(session, accessToken: rejected.value) else { return nil }
        }
        let request = AgentTokenRequest(
            group: session.group.name, storage: storage, account: account ?? Self.environmentAccount(session), scopes: scopes ?? [],
            resources: resources, minTTL: Self.seconds(minimumLifetime), program: session.environment[Self.programKey])
        return try await ask(.token(request), session)
    }

    func idToken(_ session: SharedSession, account: String?, minimumLifetime: Duration) async throws(AuthKitError) -> IDToken? {
        let request = AgentTokenRequest(
            group: session.group.name, storage: storage, account: account ?? Self.environmentAccount(session),
            minTTL: Self.seconds(minimumLifetime))
        guard let token = try await ask(.idToken(request), session) else { return nil }
        return IDToken(value: token.value, expiresAt: token.expiresAt, account: token.account, refreshed: token.refreshed)
    }

    /// A DPoP proof signed by the agent with the key of `account`'s sign-in; its failure as the
    /// error the store would have given; nil when there is no agent to ask.
    func proof(_ proof: DPoPProof, session: SharedSession, account: String?) async throws(AuthKitError) -> String? {
        let request = AgentProofRequest(
            token: AgentTokenRequest(
                group: session.group.name, storage: storage, account: account ?? Self.environmentAccount(session),
                program: session.environment[Self.programKey]),
            proof: proof)
        switch await client.send(.proof(request)) {
        case .unavailable(let reason):
            session.logger.debug("no agent; signing with the key in the store", metadata: ["reason": "\(reason)"])
            return nil
        case .answer(let response):
            guard response.ok else {
                guard let failure = response.error else { return nil }
                throw Self.cleaned(failure).error(group: session.group.name)
            }
            // A compact JWS of base64url parts, bounded: checked like anything from outside.
            guard let signed = response.proof, signed.utf8.count <= 8192,
                signed.split(separator: ".", omittingEmptySubsequences: false).count == 3,
                signed.utf8.allSatisfy({
                    $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") || (0x30...0x39).contains($0)
                        || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0)
                })
            else {
                throw .dpop(.keyUnavailable("the agent's answer is not a proof"))
            }
            return signed
        }
    }

    /// `AUTHKIT_ACCOUNT` of the asking process (the agent has its own environment).
    static func environmentAccount(_ session: SharedSession) -> String? {
        session.environment["AUTHKIT_ACCOUNT"].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// True when the agent took the rejection (and marked the token stale in the store).
    func markRejected(_ session: SharedSession, accessToken value: String) async -> Bool {
        guard !value.isEmpty else { return false }
        let request = AgentRequest.rejected(group: session.group.name, storage: storage, token: value)
        guard case .answer(let response) = await client.send(request), response.ok else { return false }
        return true
    }

    /// Tells the agent the group's sign-in changed (a login, a logout), before the caller
    /// returns: it never hands out what it held before.
    func forget(group: String) async {
        _ = await client.send(.forget(group: group))
    }

    /// The agent's token (an id_token comes the same way, without scopes), checked.
    private func ask(_ request: AgentRequest, _ session: SharedSession) async throws(AuthKitError) -> AccessToken? {
        // The refusal the lean client got for this command's token, handed over with it
        // (`exec`): asking again could ask a person to confirm twice.
        let outcome: AgentClient.Outcome
        if case .token = request, let refusal = Self.handedRefusal(session.environment) {
            outcome = .answer(refusal)
        } else {
            outcome = await client.send(request)
        }
        switch outcome {
        case .unavailable(let reason):
            session.logger.debug("no agent; reading the store", metadata: ["reason": "\(reason)"])
            return nil
        case .answer(let response):
            guard response.ok else {
                guard let failure = response.error else { return nil }
                session.logger.debug("the agent answered with a failure", metadata: ["code": "\(failure.code)"])
                throw Self.cleaned(failure).error(group: session.group.name)
            }
            let asked: AgentTokenRequest? = if case .token(let query) = request { query } else { nil }
            guard let answer = Self.checked(response, asked: asked) else {
                session.logger.debug("the agent's answer is malformed; reading the store")
                return nil
            }
            session.logger.debug("token from the agent", metadata: ["account": "\(answer.account)"])
            return answer
        }
    }

    /// A successful answer checked like anything from outside: a token of visible ASCII only,
    /// an expiry and an account — and, for a token `asked` for resources, one for those. An
    /// agent older than narrowing (no `narrowing` in its answer) ignores `resources` and
    /// `scopes` and answers with the sign-in's own token, so from it an answer with more
    /// scopes than asked is not taken either; an agent that narrows checked that itself, and
    /// more scopes are what the provider issued for other scopes (Entra names every consented
    /// one). nil when it is not the token asked for.
    static func checked(_ response: AgentResponse, asked: AgentTokenRequest?) -> AccessToken? {
        guard response.ok,
            AgentTokenAnswer.usable(
                token: response.token, expiresAt: response.expiresAt, account: response.account, scopes: response.scopes,
                resources: response.resources, narrowing: response.narrowing, askedScopes: asked?.scopes ?? [],
                askedResources: asked?.resources ?? []),
            let value = response.token, let expiresAt = response.expiresAt, let account = response.account
        else { return nil }
        return AccessToken(
            value: value, expiresAt: Date(timeIntervalSince1970: Double(expiresAt)),
            scopes: (response.scopes ?? []).map(ProviderText.displayable), account: ProviderText.displayable(account),
            refreshed: response.refreshed ?? false, tokenType: response.tokenType == "DPoP" ? "DPoP" : "Bearer",
            resources: (response.resources ?? []).filter(TokenText.isResource))
    }

    /// The agent's answer for `group`'s access token, asked on the calling thread (one
    /// blocking exchange on a unix socket, no task, no thread): for a process whose whole job
    /// is this token (`authkit token`, a credential plug-in), so that nothing else starts. The
    /// token, or the agent's failure as the error the store would have given (a refusal, not
    /// signed in — never asked twice: a `--confirm` forward would ask its person again); nil
    /// when there is no agent or its answer is malformed, and the caller goes the usual way
    /// (``SharedSession/validAccessToken(account:minimumLifetime:scopes:resources:replacing:)``). Never
    /// call it from a task of the cooperative pool: it blocks its thread.
    package static func accessTokenNow(
        group: String, storage: StorageChoice, account: String?, scopes: [String]?, resources: [String] = [],
        minimumLifetime: Duration, environment: [String: String]
    ) -> Result<AccessToken, AuthKitError>? {
        guard let client = AgentClient(environment: environment) else { return nil }
        let request = AgentRequest.token(
            AgentTokenRequest(
                group: group, storage: storage, account: account ?? environment["AUTHKIT_ACCOUNT"].flatMap { $0.isEmpty ? nil : $0 },
                scopes: scopes ?? [], resources: resources, minTTL: seconds(minimumLifetime)))
        let response: AgentResponse
        if let refusal = handedRefusal(environment) {
            response = refusal
        } else {
            guard
                case .answer(let answer) = AgentClient.exchange(
                    path: client.path, request: request, timeout: client.answerTimeout, forwardKey: client.forwardKey)
            else { return nil }
            response = answer
        }
        if !response.ok, let failure = response.error { return .failure(cleaned(failure).error(group: group)) }
        guard case .token(let asked) = request else { return nil }
        return checked(response, asked: asked).map { .success($0) }
    }

    /// The agent's refusal of this very request, which the lean client got and hands over in
    /// `AUTHKIT_AGENT_ANSWER` with the command (asking again could ask a person to confirm
    /// twice): `PID LINE`, taken only by the process `PID` — the lean client itself, after its
    /// `execv` — never by one that inherited it. Only a refusal is taken, never a token.
    static func handedRefusal(_ environment: [String: String], pid: Int32 = getpid()) -> AgentResponse? {
        guard let handed = environment["AUTHKIT_AGENT_ANSWER"], let space = handed.firstIndex(of: " "),
            handed[..<space] == String(pid)[...], case let line = handed[handed.index(after: space)...],
            let response = try? AgentMessage.decodeAnswer(from: Array(line.utf8)),
            response.version == AgentMessage.version, !response.ok, response.error != nil, response.token == nil
        else { return nil }
        return response
    }

    /// A lifetime as the wire's `min_ttl`, within its range.
    static func seconds(_ lifetime: Duration) -> Int {
        min(max(0, Int(clamping: lifetime.components.seconds)), AgentTokenRequest.maximumMinTTL)
    }

    /// A failure's text as a terminal may show it (the agent at the end of a forward is not
    /// necessarily one we trust to write to our terminal).
    static func cleaned(_ failure: AgentFailure) -> AgentFailure {
        var clean = failure
        clean.message = ProviderText.clean(failure.message) ?? "the agent gave no reason"
        clean.hint = ProviderText.clean(failure.hint)
        clean.group = failure.group.map(ProviderText.displayable)
        clean.account = failure.account.map(ProviderText.displayable)
        return clean
    }
}
