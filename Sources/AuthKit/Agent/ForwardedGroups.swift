import AuthKitCore

/// The groups a forwarded (restricted) agent socket serves, as its `hello` answers: what a
/// command that names no group uses in an SSH session or a sandbox that `authkit ssh` or
/// `authkit agent forward` opened.
package enum ForwardedGroups {
    /// The groups served by the socket `AUTHKIT_AGENT_SOCK` names, when it is a forward; nil
    /// when no socket is named (the agent's own socket is found without one), the agent is
    /// off, or the socket is no forward or does not answer within two seconds. One blocking
    /// exchange on the calling thread.
    package static func served(environment: [String: String]) -> [String]? {
        guard let named = environment["AUTHKIT_AGENT_SOCK"], !named.isEmpty, let client = AgentClient(environment: environment),
            case .answer(let hello) = AgentClient.exchange(path: client.path, request: AgentRequest.hello, timeout: .seconds(2)),
            hello.ok, hello.restricted == true
        else { return nil }
        return (hello.groups ?? []).filter(GroupName.isValid)
    }
}
