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
        var result = result
        // A forward checks what it hands out itself, and serves nothing once its time is over.
        if !key.idToken, case .success(let token) = result, let problem = policy.problem(with: token) {
            result = .failure(.refused(problem))
        }
        if policy.hasExpired(at: now.monotonic) { result = .failure(.timeIsOver) }
        switch result {
        case .failure(let failure):
            held[key] = nil
            if policy.isRestricted { failedFetches.remember(failure, for: key, at: now.monotonic) }
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

    /// Holds `token` for the next requests for `key` (bounded: the expired go first, then all).
    mutating func store(_ token: Token, for key: Key, now: Now) {
        if held.count >= Self.maximumHeld {
            held = held.filter { Double($0.value.token.expiresAt) > now.wall }
            if held.count >= Self.maximumHeld { held.removeAll() }
        }
        held[key] = Held(token: token, readAt: now.monotonic)
    }
}
