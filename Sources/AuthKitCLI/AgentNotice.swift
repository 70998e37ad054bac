import AuthKit

/// What a command tells a session that names an agent socket (`AUTHKIT_AGENT_SOCK`, as
/// `authkit ssh` and a container's forward set it) when the token store cannot be reached:
/// that the forward cannot do this, or that the forward is gone — not how to start a D-Bus
/// session on a machine that was never meant to hold the sign-in.
enum AgentNotice {
    /// The hint to give instead of the store's, or nil (not a store failure, no socket named,
    /// or a full agent answering there). `refusal`: what a forwarded socket does not do for
    /// this command ("tell a sign-in's status"); nil when it would have served the command.
    static func storeHint(
        for error: AuthKitError, command: String, refusal: String?, environment: [String: String]
    ) async -> String? {
        guard error.category == .storage, let named = environment["AUTHKIT_AGENT_SOCK"], !named.isEmpty,
            let client = AgentClient(environment: environment)
        else { return nil }
        switch await client.send(AgentRequest(op: .hello)) {
        case .answer(let hello):
            guard hello.ok, hello.restricted == true, let refusal else { return nil }
            return "this session gets access tokens from a forwarded agent socket (\(client.path)), which does not \(refusal): "
                + "run `authkit \(command)` on the machine that forwarded it"
        case .unavailable(let reason):
            return "AUTHKIT_AGENT_SOCK names a socket nobody answers on (\(reason)): the forward that made it has ended; "
                + "open it again (`authkit ssh`, `authkit agent forward`), or unset AUTHKIT_AGENT_SOCK to use this machine's store"
        }
    }
}
