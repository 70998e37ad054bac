/// Who may have a token, and the record of who got one: the groups' `allow` lists, the
/// questions (`--confirm`, a group's `confirm`), and the audit events every answer leaves.
extension AgentStateMachine {
    /// Events in one `log` answer (an answer is at most 64 KiB).
    package static let eventsPerAnswer = 40
    /// `confirm = once` yeses remembered at most (the oldest are dropped first).
    static let maximumOnceGrants = 1024

    /// A token, id_token or proof request that passed the socket's policy: refused, asked
    /// about, or served. A proof is asked about as an access token is: it uses the sign-in.
    mutating func approve(_ request: AgentRequest, storage: StorageChoice, connection: Connection, now: Now) -> [Action] {
        let query: AgentTokenRequest
        switch request {
        case .token(let token), .idToken(let token): query = token
        case .proof(let proof): query = proof.token
        default: return []
        }
        let idToken = request.operation == .idToken
        let group = query.group
        guard !rulesUnknown else {
            // Its reason stays in the agent's log: the file's text is not the asker's to see.
            let failure = AgentFailure(
                code: .failed,
                message: "the agent cannot use the config file, so it does not know the groups' rules and serves no token until it can",
                hint: "see why with authkit config on the agent's machine, or in the agent's log", category: .configuration, group: group)
            return [
                .reply(connection, .failure(failure)), record(.refused, request, connection: connection, now: now, reason: failure.message),
            ]
        }
        if let program = query.program, askers[connection]?.chain.first?.isAuthkit == true {
            askers[connection]?.program = ProcText.cleaned(program, limit: 128)
        }
        let asker = askers[connection] ?? AgentAsker(chain: [])
        let rule = rules[group] ?? AgentGroupRule()
        let onList = rule.allows(asker)
        if !onList && rule.confirm == .never {
            let reason =
                "\(Self.programName(asker)) may not have tokens of ‘\(ProviderText.displayable(group))’: "
                + "it is not on the group's allow list ([group \"\(ProviderText.displayable(group))\"] allow = … in the config file)"
            return [
                .reply(connection, .failure(.refused(reason))), record(.refused, request, connection: connection, now: now, reason: reason),
            ]
        }
        let grant = Grant(connection: connection, group: group, idToken: idToken)
        var ask = !onList || (policy.confirm && !allowed.contains(grant))
        switch rule.confirm {
        case .always:
            ask = ask || !allowed.contains(grant)
        case .once:
            let remembered = asker.session.flatMap { onceGrants[OnceGrant(session: $0, group: group, idToken: idToken)] }
            ask = ask || (!allowed.contains(grant) && (remembered ?? -1) <= now.monotonic)
        case .never:
            break
        }
        guard ask else { return proceed(request, storage: storage, connection: connection, now: now) }
        guard awaitingConfirmation[connection] == nil else {
            return [.reply(connection, .failure(.badRequest("one request at a time: the first still waits for confirmation")))]
        }
        awaitingConfirmation[connection] = (request, storage)
        let who = asker.summary
        return [
            .confirm(connection, group: group, idToken: idToken, asker: who, what: request.described),
            record(.asked, request, connection: connection, now: now),
        ]
    }

    /// An approved request: the token looked up, or the proof signed.
    private mutating func proceed(_ request: AgentRequest, storage: StorageChoice, connection: Connection, now: Now) -> [Action] {
        switch request {
        case .token(let query): return token(query, idToken: false, storage: storage, connection: connection, now: now)
        case .idToken(let query): return token(query, idToken: true, storage: storage, connection: connection, now: now)
        case .proof(let query):
            var query = query
            if let fixed = policy.accounts?[query.token.group] { query.token.account = fixed }
            return [.sign(connection, query, storage: storage)]
        default: return []
        }
    }

    /// The answer to a ``Action/sign(_:_:storage:)``: the proof for the connection, or why none.
    package mutating func signed(_ connection: Connection, _ result: Result<String, AgentFailure>, request: AgentProofRequest, now: Now)
        -> [Action]
    {
        var result = result
        if policy.hasExpired(at: now.monotonic) { result = .failure(.timeIsOver) }
        switch result {
        case .success(let proof):
            var response = AgentResponse(ok: true)
            response.proof = proof
            return [.reply(connection, response), record(.served, .proof(request), connection: connection, now: now)]
        case .failure(let failure):
            return [
                .reply(connection, .failure(failure)),
                record(.failed, .proof(request), connection: connection, now: now, reason: failure.message),
            ]
        }
    }

    /// The answer to a ``Action/confirm(_:group:idToken:asker:)``: `reason` says why there was
    /// no yes when nobody could be asked.
    package mutating func confirmed(_ connection: Connection, allowed yes: Bool, reason: String? = nil, now: Now) -> [Action] {
        guard let (request, storage) = awaitingConfirmation.removeValue(forKey: connection), let group = request.group else { return [] }
        let idToken = request.operation == .idToken
        guard yes else {
            let why = reason ?? "the person asked did not allow it"
            return [
                .reply(connection, .failure(.refused(why))), record(.refused, request, connection: connection, now: now, reason: why),
                .close(connection),
            ]
        }
        // A yes that came after the forward's time was over serves nothing.
        guard !policy.hasExpired(at: now.monotonic) else {
            return [
                .reply(connection, .failure(.timeIsOver)),
                record(.refused, request, connection: connection, now: now, reason: AgentFailure.timeIsOver.message),
            ]
        }
        allowed.insert(Grant(connection: connection, group: group, idToken: idToken))
        if let rule = rules[group], rule.confirm == .once, let session = askers[connection]?.session {
            if onceGrants.count >= Self.maximumOnceGrants {
                onceGrants = onceGrants.filter { $0.value > now.monotonic }
                if onceGrants.count >= Self.maximumOnceGrants { onceGrants.removeAll() }
            }
            onceGrants[OnceGrant(session: session, group: group, idToken: idToken)] = now.monotonic + rule.confirmFor
        }
        return [record(.allowed, request, connection: connection, now: now)]
            + proceed(request, storage: storage, connection: connection, now: now)
    }

    /// Records an event about `request` from `connection`; the action sends it to the journal.
    mutating func record(_ kind: AgentEvent.Kind, _ request: AgentRequest, connection: Connection, now: Now, reason: String? = nil)
        -> Action
    {
        var event = AgentEvent(time: Int64(now.wall), kind: kind, group: request.group.map(Self.bounded), asker: askers[connection])
        switch request {
        case .token(let query), .idToken(let query):
            event.account = query.account.map(Self.bounded)
            event.scopes = query.scopes.isEmpty ? nil : Array(query.scopes.prefix(16)).map(Self.bounded)
            event.token = request.operation == .idToken ? "id_token" : "access_token"
        case .proof(let query):
            event.account = query.token.account.map(Self.bounded)
            event.token = "dpop_proof"
        default:
            break
        }
        event.reason = reason.map { ProcText.cleaned($0, limit: 300) }
        return .journal(log.append(event))
    }

    /// A token handed to `connection`.
    mutating func served(_ token: Token, key: Key, connection: Connection, now: Now) -> Action {
        var event = AgentEvent(time: Int64(now.wall), kind: .served, group: Self.bounded(key.group), asker: askers[connection])
        event.account = Self.bounded(token.account)
        event.scopes = token.scopes.prefix(16).map(Self.bounded)
        event.token = key.idToken ? "id_token" : "access_token"
        return .journal(log.append(event))
    }

    /// A fetch for `key` that failed for `connection`.
    mutating func failedEvent(_ kind: AgentEvent.Kind, key: Key, connection: Connection, now: Now, reason: String) -> Action {
        var event = AgentEvent(time: Int64(now.wall), kind: kind, group: Self.bounded(key.group), asker: askers[connection])
        event.account = key.account.map(Self.bounded)
        event.token = key.idToken ? "id_token" : "access_token"
        event.reason = ProcText.cleaned(reason, limit: 300)
        return .journal(log.append(event))
    }

    /// A forwarded socket began or stopped serving (`via` names the forward).
    mutating func forwardEvent(_ kind: AgentEvent.Kind, via: String, now: Now) -> Action {
        .journal(log.append(forwardEvent(kind, via: via, wall: now.wall)))
    }

    /// The event itself, kept out of the log (for a farewell said from a signal handler).
    func forwardEvent(_ kind: AgentEvent.Kind, via: String, wall: Double) -> AgentEvent {
        AgentEvent.forward(kind, via: Self.bounded(via), groups: policy.groups.map { $0.keys.sorted().map(Self.bounded) }, wall: wall)
    }

    static func bounded(_ text: String) -> String { ProcText.cleaned(text, limit: 128) }

    static func programName(_ asker: AgentAsker) -> String {
        asker.program ?? asker.process.map { "\($0.name) (pid \($0.pid))" } ?? asker.summary
    }
}
