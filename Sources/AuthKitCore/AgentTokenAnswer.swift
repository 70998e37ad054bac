import StrictJSON

/// The agent's answer to a `token` request, read member by member for the lean client (which
/// has no `Codable`), and the rules every client applies before it hands the token out.
///
/// Reading is strict in the other direction too: a member the answer to a `token` request
/// does not have, or one of the wrong type, makes no answer (`nil`), and the lean client hands
/// the command to `authkit`, which reads the line its own way.
package struct AgentTokenAnswer: Equatable {
    package var ok: Bool
    package var token: String?
    /// Unix seconds.
    package var expiresAt: Int64?
    package var account: String?
    package var scopes: [String]?
    package var resources: [String]?
    package var narrowing: Bool?
    package var tokenType: String?
    /// The answer carries a failure (`error`): authkit says what it means.
    package var failed: Bool

    /// The answer on `line` (without its newline), or nil.
    package init?(line: [UInt8]) {
        guard
            let value = try? JSONValue(
                parsing: line, limits: JSONLimits(maximumBytes: AgentExchange.maximumAnswerBytes, maximumDepth: AgentExchange.maximumDepth)),
            let object = value.objectValue, object["v"]?.int64Value == 1, let ok = object["ok"]?.boolValue
        else { return nil }
        self.ok = ok
        failed = false
        for (key, member) in object where !member.isNull {
            switch key {
            case "v", "ok": break
            case "token": guard let text = member.stringValue else { return nil }; token = text
            case "account": guard let text = member.stringValue else { return nil }; account = text
            case "token_type": guard let text = member.stringValue else { return nil }; tokenType = text
            case "expires_at": guard let seconds = member.int64Value else { return nil }; expiresAt = seconds
            case "narrowing": guard let flag = member.boolValue else { return nil }; narrowing = flag
            case "refreshed": guard member.boolValue != nil else { return nil }
            case "scopes": guard let list = Self.strings(member) else { return nil }; scopes = list
            case "resources": guard let list = Self.strings(member) else { return nil }; resources = list
            // (A success that carries a failure is no answer authkit reads either.)
            case "error": guard member.objectValue != nil, !ok else { return nil }; failed = true
            default: return nil
            }
        }
    }

    private static func strings(_ value: JSONValue) -> [String]? {
        guard let array = value.arrayValue else { return nil }
        var strings: [String] = []
        for element in array {
            guard let text = element.stringValue else { return nil }
            strings.append(text)
        }
        return strings
    }

    /// Whether this answer's token may be handed out for a request of `askedScopes` and
    /// `askedResources` (``usable(token:expiresAt:account:scopes:resources:narrowing:askedScopes:askedResources:)``).
    package func usable(askedScopes: [String], askedResources: [String]) -> Bool {
        ok
            && Self.usable(
                token: token, expiresAt: expiresAt, account: account, scopes: scopes, resources: resources, narrowing: narrowing,
                askedScopes: askedScopes, askedResources: askedResources)
    }

    /// An agent's token is handed out only when it can be sent (visible ASCII, not empty), it expires at a
    /// plausible time and names its account, it is for exactly the resources asked, and — from
    /// an agent that does not narrow tokens — it is not for more scopes than asked (the
    /// sign-in's own token where other scopes were asked for).
    package static func usable(
        token: String?, expiresAt: Int64?, account: String?, scopes: [String]?, resources: [String]?, narrowing: Bool?,
        askedScopes: [String], askedResources: [String]
    ) -> Bool {
        guard let token, !token.isEmpty, TokenText.isTransportable(token), let expiresAt, expiresAt > 0,
            expiresAt < Int64(TokenText.latestTime),
            let account, !account.isEmpty
        else { return false }
        // (A forward fills in its own resources and scopes where none were asked.)
        guard askedResources.isEmpty || Set(resources ?? []) == Set(askedResources) else { return false }
        let (wanted, named) = (Set(askedScopes), Set(scopes ?? []))
        return narrowing == true || wanted.isEmpty || !wanted.isStrictSubset(of: named)
    }
}
