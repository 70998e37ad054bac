import JOSE
import SecretStore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What a socket of the agent serves.
///
/// The agent's own socket serves everything the user's sign-ins hold, to the user's own
/// processes. A restricted socket (`authkit agent forward`, for an SSH session, a container or a
/// sandbox) serves access tokens of the listed groups only — id_tokens only when allowed —
/// and never anything that changes the sign-in (forget, stop), never a refresh token: the
/// protocol has no way to ask for one.
package struct AgentPolicy: Sendable, Equatable {
    /// nil: every group, from the store the request names. Otherwise the groups served, each
    /// from the store chosen when the socket was opened (the request's store is ignored).
    package var groups: [String: StorageChoice]?
    /// Scopes other than the sign-in's own that may be asked for (nil: any).
    package var extraScopes: Set<String>?
    package var idTokens: Bool
    /// For a restricted socket opened with `--account`: the one account it serves per group
    /// (a request for another is refused). nil: any account of the group.
    package var accounts: [String: String]?
    /// Each new connection's first token waits for a yes at the terminal that opened the socket
    /// (`authkit agent forward --confirm`, as `ssh-add -c`).
    package var confirm = false
    /// A forward whose far side must open it first (`authkit ssh`): nothing is served until an
    /// `open` request brings this key, sent by the far side once it checked that the socket is
    /// its account's alone.
    package var openKey: String?
    /// A forward that hands out less (`--scope`, `--resource`): every token it serves is for at
    /// most these scopes (nil: as asked, within ``extraScopes``) and these resources (RFC 8707;
    /// empty: as asked). A request for anything wider is refused before the provider is asked.
    package var narrowScopes: [String]?
    package var resources: [String] = []
    /// For a forward without ``resources``: the resources a client may name (`--allow-resource`,
    /// as a `[credential]` mapping's `resource =` asks); any other is refused.
    package var allowedResources: Set<String> = []
    /// A forward that serves for a while only (`--for`): how long, in seconds from when it
    /// starts listening (``AgentServer`` sets ``servesUntil``).
    package var lifetime: Double?
    /// Monotonic seconds after which it serves nothing.
    package var servesUntil: Double?

    package static let owner = AgentPolicy(groups: nil, extraScopes: nil, idTokens: true)

    package static func restricted(groups: [String: StorageChoice], extraScopes: Set<String>, idTokens: Bool) -> AgentPolicy {
        AgentPolicy(groups: groups, extraScopes: extraScopes, idTokens: idTokens)
    }

    package var isRestricted: Bool { groups != nil }

    /// The store `request` reads (nil for a request that reads none), or why it is refused on
    /// this socket.
    func admit(_ request: AgentRequest) -> Result<StorageChoice?, AgentFailure> {
        let storage: StorageChoice?
        var account: String?
        var scopes: [String] = []
        switch request {
        case .hello, .open: return .success(nil)
        case .forget, .stop, .log, .stats:
            guard groups == nil else { return .failure(.refused("a forwarded agent socket only hands out tokens")) }
            return .success(nil)
        case .idToken(let query):
            guard groups == nil || idTokens else {
                return .failure(.refused("this forwarded agent socket does not hand out id_tokens (authkit agent forward --id-token)"))
            }
            (storage, account, scopes) = (query.storage, query.account, query.scopes)
        case .token(let query):
            (storage, account, scopes) = (query.storage, query.account, query.scopes)
            if !resources.isEmpty, !Set(query.resources).isSubset(of: Set(resources)) {
                return .failure(.refused("this forwarded agent socket serves tokens for \(resources.joined(separator: ", ")) only"))
            }
            // A forward opened without --resource hands out the sign-in's own tokens: a token for
            // another API (another audience) is wider, and would cost the machine a refresh each.
            if groups != nil, resources.isEmpty, !Set(query.resources).isSubset(of: allowedResources) {
                return .failure(
                    .refused(
                        "this forwarded agent socket serves no token for \(query.resources.joined(separator: ", ")) "
                            + "(open it with --allow-resource URI, or --resource URI to serve only that)"))
            }
        case .proof(let query):
            (storage, account) = (query.token.storage, query.token.account)
            // A forward for some resources signs proofs for requests to them only.
            if !resources.isEmpty, !resources.contains(where: { Self.resource($0, covers: query.proof.target) }) {
                return .failure(.refused("this forwarded agent socket signs proofs for \(resources.joined(separator: ", ")) only"))
            }
        case .rejected(_, let named, _):
            storage = named
        }
        guard let groups else { return .success(storage ?? .secretService) }
        // A token, an id_token or a rejection: only of a group this socket serves, before any
        // state is kept for it.
        let group = request.group ?? ""
        guard let served = groups[group] else {
            var refusal = AgentFailure.refused("this forwarded agent socket does not serve the group ‘\(ProviderText.displayable(group))’")
            let names = groups.keys.sorted()
            refusal.hint =
                "it serves \(names.joined(separator: ", ")): name "
                + (names.count == 1 ? "it with `--group \(names[0])`" : "one with `--group GROUP`") + " (or AUTHKIT_GROUP)"
            return .failure(refusal)
        }
        if let fixed = accounts?[group], let asked = account, asked != fixed, asked.lowercased() != fixed.lowercased() {
            return .failure(.refused("this forwarded agent socket serves another account of ‘\(ProviderText.displayable(group))’"))
        }
        if let narrowScopes, !Set(scopes).isSubset(of: Set(narrowScopes)) {
            return .failure(.refused("this forwarded agent socket serves tokens for at most \(narrowScopes.joined(separator: " "))"))
        }
        if narrowScopes == nil, !scopes.isEmpty, let extraScopes, !Set(scopes).isSubset(of: extraScopes) {
            return .failure(.refused("this forwarded agent socket does not serve those scopes (authkit agent forward --allow-scope)"))
        }
        return .success(served)
    }

    /// `request` as this socket serves it: a forward that hands out less fills in its scopes
    /// and resources where the request names none.
    package func narrowed(_ request: AgentTokenRequest) -> AgentTokenRequest {
        var request = request
        if request.resources.isEmpty { request.resources = resources }
        if request.scopes.isEmpty, let narrowScopes { request.scopes = narrowScopes }
        return request
    }

    /// Whether a proof's `htu` (`target`) is `resource` or below it (a path under it).
    static func resource(_ resource: String, covers target: String) -> Bool {
        // A dot segment (also percent-encoded) would climb out of the resource on the server.
        guard DPoPProof.isPlainTarget(target) else { return false }
        guard let url = URL(string: resource), let base = DPoPProof.target(of: url) else { return false }
        return target == base || target.hasPrefix(base.hasSuffix("/") ? base : base + "/")
    }

    /// Why `token` is wider than this socket hands out, or nil. A forward checks what it serves
    /// itself, whatever the agent or store it asked did (an older agent that ignored the
    /// narrowing, a provider that does not narrow): at most its `--scope` scopes — those the
    /// token's answer named and those in its own `scope` claim (RFC 9068) — and, for
    /// `--resource`, only a token shown to be for its resources.
    func problem(with token: AgentStateMachine.Token) -> String? {
        guard isRestricted, narrowScopes != nil || !resources.isEmpty else { return nil }
        let claims = (try? CompactJWS(parsing: token.value)).flatMap { try? JWTClaims(payload: $0.payload) }
        if let narrowScopes {
            var issued = Set(token.scopes)
            if let scope = claims?["scope"]?.stringValue { issued.formUnion(scope.split(separator: " ").map(String.init)) }
            let extra = issued.subtracting(narrowScopes).sorted()
            if !extra.isEmpty {
                return "the token is for \(extra.prefix(8).map(ProviderText.displayable).joined(separator: " ")) too; "
                    + "this forward serves at most \(narrowScopes.joined(separator: " "))"
            }
        }
        if !resources.isEmpty {
            guard !token.resources.isEmpty, Set(token.resources).isSubset(of: Set(resources)) else {
                return "the token is not shown to be for \(resources.joined(separator: ", ")) only"
            }
            if let audience = claims?.audience, !audience.isEmpty, !Set(audience).isSubset(of: Set(resources)) {
                return "the token is for another audience too; this forward serves \(resources.joined(separator: ", ")) only"
            }
        }
        return nil
    }

    /// Whether the socket's time (`--for`) is over at `monotonic` seconds.
    package func hasExpired(at monotonic: Double) -> Bool {
        servesUntil.map { monotonic >= $0 } ?? false
    }
}
