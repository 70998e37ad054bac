/// What only a forwarded socket does: wait for its far side's `open` (`authkit ssh`).
extension AgentStateMachine {
    /// The far side's `open`: with the forward's key, every connection made before it (in the
    /// moment before the far side's check, when another account might have connected) is closed
    /// and the forward serves. A wrong key means somebody else reached the socket: the forward
    /// ends.
    mutating func open(_ key: String, connection: Connection) -> [Action] {
        guard let expected = policy.openKey else { return [.reply(connection, AgentResponse(ok: true))] }
        guard ConstantTime.equals(key, expected) else {
            return [
                .reply(connection, .failure(.refused("not this forward's key"))),
                .warn("a process on the far side reached the forwarded socket with another key; the forward ended, nothing was served"),
                .stop,
            ]
        }
        guard !isOpen else { return [.reply(connection, AgentResponse(ok: true))] }
        isOpen = true
        let earlier = askers.keys.filter { $0 != connection }.sorted()
        return [.reply(connection, AgentResponse(ok: true))] + earlier.map { .close($0) }
    }
}
