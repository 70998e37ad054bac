import JOSE

/// What a token is asked for beyond the sign-in's own: other or fewer scopes (RFC 6749 §6,
/// on refresh) and resources (RFC 8707 §2.2). A narrowed token is kept beside the sign-in's
/// own, under ``cacheKey``, so the tools asking for the same narrow token share it and the
/// sign-in's token is untouched.
///
/// Narrowing is checked, never assumed (``problem(with:grant:)``): a provider that answers a
/// request for fewer scopes with more, or a resource request with a token for another audience
/// or one that does not say its audience, gives no token.
package struct TokenNarrowing: Sendable, Hashable, CustomStringConvertible {
    /// The scopes asked for, sorted, no duplicates; nil for the sign-in's own.
    package let scopes: [String]?
    /// The resources asked for (RFC 8707: absolute URIs), sorted, no duplicates.
    package let resources: [String]
    /// A token exchange's `audience` (RFC 8693): the token is exchanged for, not refreshed.
    package let audience: String?

    /// The sign-in's own token.
    package static let none = TokenNarrowing(scopes: nil, resources: [])

    package init(scopes: [String]?, resources: [String], audience: String? = nil) {
        self.scopes = scopes.flatMap { $0.isEmpty ? nil : Array(Set($0)).sorted() }
        self.resources = Array(Set(resources)).sorted()
        self.audience = audience
    }

    /// `scopes` and `resources` for a sign-in granted `granted`: asking for exactly the granted
    /// scopes and no resource is asking for the sign-in's own token.
    package init(scopes: [String]?, resources: [String], granted: [String]) {
        self.init(scopes: scopes, resources: resources)
        if self.resources.isEmpty, let wanted = self.scopes, Set(wanted) == Set(granted) { self = .none }
    }

    package var isNone: Bool { scopes == nil && resources.isEmpty && audience == nil }

    /// The stored token's key: the scopes space-joined (the key scope-only tokens always had),
    /// then each resource as `resource=URI`; nil for the sign-in's own token.
    package var cacheKey: String? {
        guard !isNone else { return nil }
        let exchange = audience.map { ["exchange", "audience=" + $0] } ?? []
        return (exchange + (scopes ?? []) + resources.map { "resource=" + $0 }).joined(separator: " ")
    }

    /// Whether this asks for fewer scopes than `granted` (rather than other ones).
    package func narrowsScopes(of granted: [String]) -> Bool {
        guard let scopes else { return false }
        return Set(scopes).isSubset(of: Set(granted))
    }

    /// Why `response` is not the token asked for, or nil when it is: scopes beyond those asked
    /// (when fewer than the grant's were asked), or a resource request answered with a token
    /// for another audience, or one that does not say its audience (an opaque token cannot be
    /// told apart from the sign-in's own).
    package func problem(accessToken: String, scopes granted: [String]?, grant: [String]) -> String? {
        let claims = (try? CompactJWS(parsing: accessToken)).flatMap { try? JWTClaims(payload: $0.payload) }
        // An exchanged token's scopes are at most those asked, whatever the grant's.
        if let asked = scopes, narrowsScopes(of: grant) || audience != nil {
            // What the answer names and what the token itself says (RFC 9068 `scope`), both:
            // an answer may name fewer scopes than its token carries.
            let claimed = claims?["scope"]?.stringValue?.split(separator: " ").map(String.init)
            let issued = (granted ?? claimed).map { Set($0).union(claimed ?? []) }
            if let issued, !issued.isSubset(of: Set(asked)) {
                let extra = Set(issued).subtracting(asked).sorted().prefix(8)
                return
                    "the provider does not narrow scopes: asked for \(asked.joined(separator: " ")), it issued \(extra.joined(separator: " ")) too"
            }
        }
        let wanted = resources + (audience.map { [$0] } ?? [])
        guard !wanted.isEmpty else { return nil }
        let named = wanted.map { ProviderText.displayable($0) }.joined(separator: ", ")
        guard let claims else {
            return "the provider's access token does not say its audience (it is not a JWT), so nothing shows it is only for \(named)"
        }
        let issued = claims.audience
        guard !issued.isEmpty else { return "the provider's access token names no audience, so it is not only for \(named)" }
        let others = issued.filter { !wanted.contains($0) }
        guard others.isEmpty else {
            return "the provider ignored the \(audience == nil ? "resource" : "audience"): its token is for "
                + "\(others.prefix(4).map { ProviderText.displayable($0) }.joined(separator: ", ")), not only for \(named)"
        }
        return nil
    }

    package var description: String {
        var parts: [String] = []
        if let scopes { parts.append("scopes \(scopes.joined(separator: " "))") }
        if !resources.isEmpty { parts.append("resources \(resources.joined(separator: " "))") }
        if let audience { parts.append("exchanged for \(audience)") }
        return parts.isEmpty ? "the sign-in's own token" : parts.joined(separator: ", ")
    }
}
