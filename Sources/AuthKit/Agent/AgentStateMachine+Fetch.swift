/// What a fetch through the shared session brings back: handed to every connection waiting for
/// it that asked no longer a life than it has, held for the next, fetched again for the others.
extension AgentStateMachine {
    /// The outcome of a ``Action/fetch(_:minTTL:)``.
    package mutating func fetched(_ key: Key, _ result: Result<Token, AgentFailure>, now: Now) -> [Action] {
        let asked = fetching.removeValue(forKey: key) ?? 0
        let began = fetchGeneration.removeValue(forKey: key) ?? 0
        if began != generations[key.group, default: 0], let waiters = waiting[key], !waiters.isEmpty {
            // The sign-in changed while this fetch ran (a logout, a rejected token): ask again.
            let longest = waiters.map(\.minTTL).max() ?? asked
            fetching[key] = longest
            fetchGeneration[key] = generations[key.group, default: 0]
            return [.fetch(key, minTTL: longest)]
        }
        if !fetchGeneration.keys.contains(where: { $0.group == key.group }) { generations[key.group] = nil }
        let waiters = waiting.removeValue(forKey: key) ?? []
        switch result {
        case .failure(let failure):
            held[key] = nil
            return waiters.flatMap { waiter -> [Action] in
                let kind: AgentEvent.Kind = failure.code == .refused ? .refused : .failed
                return [
                    .reply(waiter.connection, .failure(failure)),
                    failedEvent(kind, key: key, connection: waiter.connection, now: now, reason: failure.message),
                ]
            }
        case .success(let token):
            store(token, for: key, now: now)
            if policy.isRestricted && token.refreshed { lastRefresh[key.group] = now.monotonic }
            var actions: [Action] = []
            var later: [Waiter] = []
            for waiter in waiters {
                // Served: the token the session gave for the min_ttl asked (the caller judges a
                // provider whose tokens live shorter). Waiters who asked more fetch again.
                if waiter.minTTL <= asked || Double(token.expiresAt) - now.wall >= Double(waiter.minTTL) {
                    actions.append(.reply(waiter.connection, Self.answer(token)))
                    actions.append(served(token, key: key, connection: waiter.connection, now: now))
                } else {
                    later.append(waiter)
                }
            }
            if let longest = later.map(\.minTTL).max() {
                waiting[key] = later
                fetching[key] = longest
                fetchGeneration[key] = generations[key.group, default: 0]
                actions.append(.fetch(key, minTTL: longest))
            }
            return actions
        }
    }
}
