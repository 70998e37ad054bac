/// What a `token` or `id_token` request asks for.
package struct AgentTokenRequest: Sendable, Equatable {
    package static let defaultMinTTL = 60
    package static let maximumMinTTL = 86_400

    /// The group, never empty.
    package var group: String
    /// Where the caller would read the sign-in (nil: the Secret Service).
    package var storage: StorageChoice?
    package var account: String?
    /// Other scopes than the sign-in's own, or fewer (access tokens only).
    package var scopes: [String]
    /// The APIs the token is for (RFC 8707; access tokens only).
    package var resources: [String]
    /// Seconds the token must still live, 0 … ``maximumMinTTL``.
    package var minTTL: Int
    /// The program a token is for, when authkit asks for a program it runs (`exec`): named in
    /// the log and matched against a group's `allow` list; believed only from authkit itself.
    package var program: String?

    package init(
        group: String, storage: StorageChoice? = nil, account: String? = nil, scopes: [String] = [], resources: [String] = [],
        minTTL: Int = defaultMinTTL, program: String? = nil
    ) {
        self.group = group
        self.storage = storage
        self.account = account
        self.scopes = scopes
        self.resources = resources
        self.minTTL = minTTL
        self.program = program
    }
}

/// What a `proof` request asks for: whose sign-in (as a token request names it), and what the
/// proof says.
package struct AgentProofRequest: Sendable, Equatable {
    /// The group, store, account and program, as for an access token (no scopes, no `min_ttl`).
    package var token: AgentTokenRequest
    /// The proof's method, URL (without query), access-token hash and nonce.
    package var proof: DPoPProof

    package init(token: AgentTokenRequest, proof: DPoPProof) {
        self.token = token
        self.proof = proof
    }
}
