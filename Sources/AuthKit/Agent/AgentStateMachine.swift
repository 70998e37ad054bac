import SecretStore

/// The agent's protocol logic without sockets: it reads request lines, answers from memory
/// where it can, and asks its I/O shell to fetch a token through the shared session where it
/// cannot — once per key, however many connections wait for it.
///
/// Rules:
/// * A token held in memory is handed out only while it lives the asked `min_ttl` and was read
///   from the store less than ``recheckInterval`` ago (0 for the kernel keyring, which is read
///   on each request): a sign-in locked, deleted or replaced by another program stops being
///   served within that interval.
/// * `forget` (a login, a logout) and `rejected` (a server's 401) drop what is held at once.
/// * Only access tokens and id_tokens are ever held; a refresh token never enters the agent.
/// * A forwarded socket's client cannot make the machine refresh at will: its `min_ttl` is
///   capped at ``maximumForwardedMinTTL``; after a refresh of a group it caused, for
///   ``forwardedRefreshInterval``, any unexpired token of the group is served whatever `min_ttl`
///   asks (a provider whose tokens live no longer than the cap would otherwise refresh on every
///   request); and its `rejected` marks a group's token stale at most once per
///   ``forwardedRejectionInterval``. It changes state only for the groups it
///   serves, and every map here is bounded by what is held, fetched or connected.
package struct AgentStateMachine: Sendable {
    /// What identifies one held token.
    package struct Key: Hashable, Sendable {
        package var storage: StorageChoice
        package var group: String
        package var account: String?
        package var scopes: [String]
        package var resources: [String] = []
        package var idToken: Bool

        package init(storage: StorageChoice, group: String, account: String?, scopes: [String], resources: [String] = [], idToken: Bool) {
            self.storage = storage
            self.group = group
            self.account = account
            self.scopes = scopes
            self.resources = resources
            self.idToken = idToken
        }
    }

    /// A token as the shared session handed it out.
    package struct Token: Sendable, Equatable {
        package var value: String
        /// Unix seconds.
        package var expiresAt: Int64
        package var account: String
        package var scopes: [String]
        package var refreshed: Bool
        /// `DPoP` for a bound token; nil for a bearer one.
        package var tokenType: String?
        package var resources: [String] = []

        package init(value: String, expiresAt: Int64, account: String, scopes: [String], refreshed: Bool, tokenType: String? = nil) {
            self.value = value
            self.expiresAt = expiresAt
            self.account = account
            self.scopes = scopes
            self.refreshed = refreshed
            self.tokenType = tokenType
        }
    }

    /// Wall-clock seconds (token expiry) and monotonic seconds (age of what is held).
    package struct Now: Sendable {
        package var wall: Double
        package var monotonic: Double
        package init(wall: Double, monotonic: Double) {
            self.wall = wall
            self.monotonic = monotonic
        }
    }

    package typealias Connection = Int

    package enum Action: Sendable, Equatable {
        /// Write this answer to the connection.
        case reply(Connection, AgentResponse)
        /// Read (and refresh, if need be) this token through the shared session, then call
        /// ``fetched(_:_:now:)``.
        case fetch(Key, minTTL: Int)
        /// A server refused this token: mark it stale in the group's store (the next request
        /// refreshes), then answer the connection `ok`.
        case markRejected(group: String, storage: StorageChoice, token: String, then: Connection)
        /// Ask a person whether this connection's asker may have a token of this kind for this
        /// group (`--confirm`, a group's `confirm`); call ``confirmed(_:allowed:reason:now:)``
        /// with the answer. `asker` names who asks (``AgentAsker/summary``), `what` what it asks
        /// for (the kind of token, the group, the account, scopes and resources).
        case confirm(Connection, group: String, idToken: Bool, asker: String, what: String)
        /// Sign this proof with the key of the sign-in the request names, then call
        /// ``signed(_:_:request:now:)``.
        case sign(Connection, AgentProofRequest, storage: StorageChoice)
        /// Send this audit event to the journal (it is already in ``log``).
        case journal(AgentEvent)
        /// Close the connection (after a malformed request).
        case close(Connection)
        /// Tell the person who started the agent or forward (its log, at warning level).
        case warn(String)
        /// Stop serving.
        case stop
    }

    struct Held {
        var token: Token
        var readAt: Double
    }

    struct Waiter {
        var connection: Connection
        var minTTL: Int
    }

    package let policy: AgentPolicy
    package let recheckInterval: Double
    package let pid: Int32
    var held: [Key: Held] = [:]
    var waiting: [Key: [Waiter]] = [:]
    /// The `min_ttl` of the fetch under way for a key.
    var fetching: [Key: Int] = [:]
    /// Bumped by `forget` and `rejected` while a fetch of the group is under way: a fetch that
    /// began before may have read what the store no longer holds, so its answer is not kept or
    /// handed out; it is fetched again. A group leaves the map with its last fetch.
    var generations: [String: Int] = [:]
    var fetchGeneration: [Key: Int] = [:]
    /// A forwarded socket: when each served group's token was last marked stale (monotonic).
    var lastRejection: [String: Double] = [:]
    /// A forwarded socket: when a fetch it caused last refreshed each served group (monotonic).
    var lastRefresh: [String: Double] = [:]
    /// A forwarded socket: the fetches that failed, answered as they failed for a while.
    var failedFetches = AgentFailedFetches()
    /// False for a forward that waits for its far side's `open` (``AgentPolicy/openKey``).
    var isOpen: Bool
    /// What a person allowed a connection (a group, a kind of token), and the request of each
    /// connection waiting for the answer.
    var allowed: Set<Grant> = []
    var awaitingConfirmation: [Connection: (AgentRequest, StorageChoice)] = [:]
    /// `confirm = once`: a yes for a session (its leader), a group and a kind, until when
    /// (monotonic seconds).
    var onceGrants: [OnceGrant: Double] = [:]
    /// Who is at the other end of each connection (`SO_PEERCRED` and `/proc`).
    var askers: [Connection: AgentAsker] = [:]
    /// The groups' rules (`[group "NAME"]` in the config file): who may ask, and whether a
    /// person is asked first.
    package var rules: [String: AgentGroupRule] = [:]
    /// True while the config file cannot be used and no rules were ever read from it: what
    /// the groups' `allow` and `confirm` say is unknown, so no token, id_token or proof goes out.
    package var rulesUnknown = false
    /// What was served, refused and asked, bounded.
    package internal(set) var log = AgentAuditLog()

    package static let maximumHeld = 512
    package static let maximumMinTTL = AgentTokenRequest.maximumMinTTL
    /// The longest `min_ttl` a forwarded socket's client gets: asking more would refresh on
    /// every request.
    package static let maximumForwardedMinTTL = 300
    /// How often a forwarded socket's `rejected` may send the machine to the provider.
    package static let forwardedRejectionInterval: Double = 60
    /// How often a forwarded socket's `min_ttl` may make the machine refresh a group.
    package static let forwardedRefreshInterval: Double = 60

    struct Grant: Hashable {
        var connection: Connection
        var group: String
        var idToken: Bool
    }

    struct OnceGrant: Hashable {
        var session: String
        var group: String
        var idToken: Bool
    }

    package init(policy: AgentPolicy, recheckInterval: Double = 1, pid: Int32) {
        self.policy = policy
        self.recheckInterval = recheckInterval
        self.pid = pid
        self.isOpen = policy.openKey == nil
    }

    /// How many tokens are held (for `status`).
    package var heldCount: Int { held.count }

    /// One request line from `connection`.
    package mutating func receive(_ line: some Collection<UInt8>, from connection: Connection, now: Now) -> [Action] {
        let request: AgentRequest
        do throws(AgentFailure) {
            request = try AgentMessage.decodeRequest(from: line)
        } catch {
            return [.reply(connection, .failure(error)), .close(connection)]
        }
        let storage: StorageChoice?
        switch policy.admit(request) {
        case .success(let admitted): storage = admitted
        case .failure(let failure):
            switch request {
            case .token, .idToken, .rejected, .proof:
                return [
                    .reply(connection, .failure(failure)),
                    record(.refused, request, connection: connection, now: now, reason: failure.message),
                ]
            default:
                return [.reply(connection, .failure(failure))]
            }
        }
        switch request {
        case .token, .idToken, .rejected, .proof:
            guard !policy.hasExpired(at: now.monotonic) else {
                let failure = AgentFailure.timeIsOver
                return [
                    .reply(connection, .failure(failure)),
                    record(.refused, request, connection: connection, now: now, reason: failure.message),
                ]
            }
            guard isOpen else {
                let failure = AgentFailure(
                    code: .notOpen,
                    message: "this forward is not open yet: its far side has not checked that only its account can reach the socket",
                    hint: "run authkit through `authkit ssh`, whose session opens it (AUTHKIT_FORWARD_KEY)", category: .usage)
                return [
                    .reply(connection, .failure(failure)),
                    record(.refused, request, connection: connection, now: now, reason: failure.message),
                ]
            }
        default:
            break
        }
        switch request {
        case .open(let key):
            return open(key, connection: connection)
        case .hello:
            var response = AgentResponse(ok: true)
            response.agent = AuthKitVersion.current
            response.pid = pid
            response.restricted = policy.isRestricted
            response.groups = policy.groups.map { $0.keys.sorted() }
            return [.reply(connection, response)]
        case .stop:
            return [.reply(connection, AgentResponse(ok: true)), .stop]
        case .log(let since, let group):
            var response = AgentResponse(ok: true)
            response.events = log.events(after: since, group: group, limit: Self.eventsPerAnswer)
            return [.reply(connection, response)]
        case .stats:
            var response = AgentResponse(ok: true)
            response.counts = log.counts
            return [.reply(connection, response)]
        case .forget(let group):
            held = held.filter { $0.key.group != group }
            changed(group)
            return [.reply(connection, AgentResponse(ok: true))]
        case .rejected(let group, _, let value):
            held = held.filter { $0.value.token.value != value }
            guard let storage else { return [.reply(connection, AgentResponse(ok: true))] }
            if policy.isRestricted {
                // What is held was dropped; the store is marked (and the provider asked) at most
                // once an interval, whatever the client sends.
                if let last = lastRejection[group], now.monotonic - last < Self.forwardedRejectionInterval {
                    return [.reply(connection, AgentResponse(ok: true))]
                }
                lastRejection[group] = now.monotonic
            }
            changed(group)
            return [.markRejected(group: group, storage: storage, token: value, then: connection)]
        case .token, .idToken, .proof:
            guard let storage else { return [.reply(connection, .failure(.badRequest("a token request needs a store")))] }
            return approve(request, storage: storage, connection: connection, now: now)
        }
    }

    /// The group's sign-in changed: a fetch under way began before, and is done again.
    private mutating func changed(_ group: String) {
        guard fetchGeneration.keys.contains(where: { $0.group == group }) else { return }
        generations[group, default: 0] += 1
    }

    /// Who is at the other end of `connection`.
    package mutating func opened(_ connection: Connection, asker: AgentAsker) {
        askers[connection] = asker
    }

    mutating func token(_ asked: AgentTokenRequest, idToken: Bool, storage: StorageChoice, connection: Connection, now: Now)
        -> [Action]
    {
        let request = idToken ? asked : policy.narrowed(asked)
        let group = request.group
        var minTTL = request.minTTL
        if policy.isRestricted {
            minTTL = min(minTTL, Self.maximumForwardedMinTTL)
            // Refreshed a moment ago: any token that has not expired serves.
            if let last = lastRefresh[group], now.monotonic - last < Self.forwardedRefreshInterval { minTTL = 0 }
        }
        let scopes = Array(Set(request.scopes)).sorted()
        let resources = Array(Set(request.resources)).sorted()
        let account = policy.accounts?[group] ?? request.account
        let key = Key(storage: storage, group: group, account: account, scopes: scopes, resources: resources, idToken: idToken)
        if let entry = held[key], usable(entry, key: key, minTTL: minTTL, now: now) {
            return [.reply(connection, Self.answer(entry.token)), served(entry.token, key: key, connection: connection, now: now)]
        }
        if let failure = failedFetches.failure(for: key, at: now.monotonic) {
            let kind: AgentEvent.Kind = failure.code == .refused ? .refused : .failed
            return [
                .reply(connection, .failure(failure)),
                failedEvent(kind, key: key, connection: connection, now: now, reason: failure.message),
            ]
        }
        waiting[key, default: []].append(Waiter(connection: connection, minTTL: minTTL))
        // A fetch under way answers this request too (or is followed by one for a longer min_ttl).
        if fetching[key] != nil { return [] }
        fetching[key] = minTTL
        fetchGeneration[key] = generations[group, default: 0]
        return [.fetch(key, minTTL: minTTL)]
    }

    private func usable(_ entry: Held, key: Key, minTTL: Int, now: Now) -> Bool {
        let interval = key.storage.kind.agentRecheckInterval ?? recheckInterval
        return now.monotonic - entry.readAt < interval && Double(entry.token.expiresAt) - now.wall >= Double(minTTL)
    }

    /// A connection went away: it waits for nothing any more.
    package mutating func closed(_ connection: Connection) {
        allowed = allowed.filter { $0.connection != connection }
        awaitingConfirmation[connection] = nil
        askers[connection] = nil
        for (key, waiters) in waiting {
            let left = waiters.filter { $0.connection != connection }
            waiting[key] = left.isEmpty ? nil : left
        }
    }

    /// How many entries the machine's maps hold, for tests of its bounds.
    package var footprint: Int {
        held.count + waiting.count + fetching.count + generations.count + fetchGeneration.count + lastRejection.count
            + lastRefresh.count + failedFetches.count + allowed.count
            + awaitingConfirmation.count + askers.count + onceGrants.count
    }

    static func answer(_ token: Token) -> AgentResponse {
        var response = AgentResponse(ok: true)
        response.token = token.value
        response.expiresAt = token.expiresAt
        response.account = token.account
        response.scopes = token.scopes
        response.refreshed = token.refreshed
        response.tokenType = token.tokenType
        response.resources = token.resources.isEmpty ? nil : token.resources
        response.narrowing = true
        return response
    }
}
