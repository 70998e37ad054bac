extension AgentRequest {
    /// What a request asks for, as a person reads it: "an access token of com.example.prod for
    /// ada@example.com (scopes openid profile; for https://api.example/)".
    var described: String {
        let bounded = AgentStateMachine.bounded
        let kind: String
        let query: AgentTokenRequest
        switch self {
        case .token(let token): (kind, query) = ("an access token", token)
        case .idToken(let token): (kind, query) = ("an id_token", token)
        case .proof(let proof): (kind, query) = ("a DPoP proof (to use the access token with \(proof.proof.method))", proof.token)
        default: return "nothing"
        }
        var text = "\(kind) of \(bounded(query.group))"
        text += query.account.map { " for \(bounded($0))" } ?? " for the group's current account"
        var details: [String] = []
        if !query.scopes.isEmpty { details.append("scopes " + query.scopes.prefix(8).map(bounded).joined(separator: " ")) }
        if !query.resources.isEmpty { details.append("for " + query.resources.prefix(4).map(bounded).joined(separator: ", ")) }
        return details.isEmpty ? text : text + " (" + details.joined(separator: "; ") + ")"
    }
}
