/// One entry of the agent's audit log: a token served or refused, a question asked and
/// answered, a forward opened or closed — with when, for which group, account and scopes, and
/// who asked. Never a token.
package struct AgentEvent: Sendable, Equatable, Codable {
    package enum Kind: String, Sendable, Codable {
        /// A token was handed out.
        case served
        /// A request was refused (by the socket's policy, a group's rules, or a person).
        case refused
        /// The request failed (not signed in, the store, the provider).
        case failed
        /// A person was asked to allow the request.
        case asked
        /// A person allowed it.
        case allowed
        /// A forwarded socket was opened or closed.
        case opened, closed
    }

    /// Numbers events in order, from 1, for `agent log --follow`.
    package var sequence = 0
    /// Unix seconds.
    package var time: Int64
    package var kind: Kind
    package var group: String?
    package var account: String?
    package var scopes: [String]?
    /// `access_token` or `id_token`.
    package var token: String?
    /// Why it was refused or failed, or what was asked.
    package var reason: String?
    /// The asker, in words (``AgentAsker/summary``).
    package var asker: String?
    package var pid: Int32?
    package var executable: String?
    package var commandLine: String?
    package var unit: String?
    package var via: String?

    package init(time: Int64, kind: Kind, group: String? = nil, asker: AgentAsker? = nil) {
        self.time = time
        self.kind = kind
        self.group = group
        if let asker {
            self.asker = asker.summary
            pid = asker.process?.pid
            executable = asker.program ?? asker.process?.executable
            commandLine = asker.process?.commandLine
            unit = asker.unit
            via = asker.via
        }
    }

    /// A forward began (`opened`) or stopped (`closed`) serving, with the groups it serves
    /// (nil: all), so the log shows what was reachable, and when.
    static func forward(_ kind: Kind, via: String, groups: [String]?, wall: Double) -> AgentEvent {
        var event = AgentEvent(time: Int64(wall), kind: kind)
        event.via = via
        event.group = groups.map { $0.prefix(16).joined(separator: " ") }
        return event
    }

    enum CodingKeys: String, CodingKey {
        case sequence = "seq", time, kind, group, account, scopes, token, reason, asker, pid, executable
        case commandLine = "command_line", unit, via
    }
}

/// The last ``capacity`` events, in memory: bounded however many requests arrive.
package struct AgentAuditLog: Sendable {
    package static let capacity = 10_000
    private var events: [AgentEvent] = []
    private var start = 0
    private(set) var lastSequence = 0
    /// Served and refused requests per group since the agent started, and the last asker.
    package private(set) var counts: [String: Counts] = [:]

    package struct Counts: Sendable, Equatable, Codable {
        package var served = 0
        package var refused = 0
        package var lastAsker: String?
        enum CodingKeys: String, CodingKey { case served, refused, lastAsker = "last_asker" }
    }

    package init() {}

    /// Adds `event`, numbered; returns it as kept.
    @discardableResult
    package mutating func append(_ event: AgentEvent) -> AgentEvent {
        var event = event
        lastSequence += 1
        event.sequence = lastSequence
        if events.count < Self.capacity {
            events.append(event)
        } else {
            events[start] = event
            start = (start + 1) % Self.capacity
        }
        if let group = event.group, event.kind == .served || event.kind == .refused {
            // Counted only for groups that exist in the counts or while the map is small: a
            // client naming ever-new groups cannot grow it past the log's own bound.
            if counts[group] != nil || counts.count < Self.capacity {
                var count = counts[group] ?? Counts()
                if event.kind == .served { count.served += 1 } else { count.refused += 1 }
                count.lastAsker = event.asker
                counts[group] = count
            }
        }
        return event
    }

    /// Events after `sequence`, oldest first, at most `limit`, of `group` when one is named.
    package func events(after sequence: Int, group: String? = nil, limit: Int) -> [AgentEvent] {
        var result: [AgentEvent] = []
        for index in 0..<events.count {
            let event = events[(start + index) % events.count]
            guard event.sequence > sequence, group == nil || event.group == group else { continue }
            result.append(event)
            if result.count == limit { break }
        }
        return result
    }

    package var count: Int { events.count }
}
