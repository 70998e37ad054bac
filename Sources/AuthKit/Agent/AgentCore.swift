import Logging
import NIOCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Runs ``AgentStateMachine``'s actions: writes answers, fetches tokens through
/// ``AgentSessions``, stops. The one place the agent's state is changed.
actor AgentCore {
    private var machine: AgentStateMachine
    private let sessions: AgentSessions
    private let logger: Logger
    private var channels: [AgentStateMachine.Connection: any Channel] = [:]
    private var busy: [AgentStateMachine.Connection: Int] = [:]
    private var nextConnection = 0
    private var onStop: (@Sendable () -> Void)?
    /// Asks the person at the terminal (`--confirm`); one question at a time.
    private let confirmer: (@Sendable (String) async -> Bool)?
    private var questions: Task<Void, Never>?
    /// Asks through a program (`AUTHKIT_ASKPASS`) when there is no terminal.
    private let askpass: AgentAskpass?
    private let journal: AgentJournal?
    /// On a forwarded socket: the forward, named in every asker.
    private let via: String?
    private var forwardSaid: AgentEvent.Kind?
    private let authkit = AgentAsker.ownExecutable
    /// Where the groups' rules come from (the config file), read again when it changes.
    private var rules: AgentRulesSource

    init(
        machine: AgentStateMachine, sessions: AgentSessions, logger: Logger, confirmer: (@Sendable (String) async -> Bool)? = nil,
        askpass: AgentAskpass? = nil, journal: AgentJournal? = nil, via: String? = nil, environment: [String: String] = [:]
    ) {
        self.machine = machine
        self.sessions = sessions
        self.logger = logger
        self.confirmer = confirmer
        self.askpass = askpass
        self.journal = journal
        self.via = via
        self.rules = AgentRulesSource(environment: environment)
    }

    var heldCount: Int { machine.heldCount }

    func attach(onStop: @escaping @Sendable () -> Void) {
        self.onStop = onStop
    }

    nonisolated func open(_ channel: any Channel, peer: Int32, limit: Int) -> EventLoopFuture<AgentStateMachine.Connection?> {
        let promise = channel.eventLoop.makePromise(of: AgentStateMachine.Connection?.self)
        promise.completeWithTask { await self.register(channel, peer: peer, limit: limit) }
        return promise.futureResult
    }

    private func register(_ channel: any Channel, peer: Int32, limit: Int) -> AgentStateMachine.Connection? {
        if channels.count >= limit {
            // The oldest connection that waits for no answer makes room: connections held open
            // (by a slow or hostile client) cannot lock everyone else out.
            guard let idle = channels.keys.filter({ (busy[$0] ?? 0) == 0 }).min(), let victim = channels[idle] else {
                logger.warning("too many connections waiting for answers; one refused", metadata: ["limit": "\(limit)"])
                return nil
            }
            logger.info("connection limit reached; the oldest idle connection closed", metadata: ["limit": "\(limit)"])
            closed(idle)
            victim.close(promise: nil)
        }
        nextConnection += 1
        channels[nextConnection] = channel
        machine.opened(nextConnection, asker: AgentAsker.resolve(pid: peer, via: via, authkit: authkit))
        return nextConnection
    }

    /// A forwarded socket began (`.opened`) or stopped (`.closed`) serving: said in the log.
    func forward(_ kind: AgentEvent.Kind) {
        guard let via, forwardSaid != kind else { return }  // a second close says nothing new
        forwardSaid = kind
        perform([machine.forwardEvent(kind, via: via, now: Self.now())])
    }

    /// The journal's datagram saying this forward closed, built ahead for a process that ends
    /// on a signal, where nothing can be built (nil: not a forward, or no journal).
    func farewell() -> (journal: String, datagram: [UInt8])? {
        guard let via, let journal else { return nil }
        let event = machine.forwardEvent(.closed, via: via, wall: Self.now().wall)
        return (journal.path, AgentJournal.datagram(event, message: Self.message(event)))
    }

    func isWaiting(_ connection: AgentStateMachine.Connection) -> Bool {
        (busy[connection] ?? 0) > 0
    }

    func receive(_ line: [UInt8], from connection: AgentStateMachine.Connection) {
        guard let channel = channels[connection] else { return }  // closed meanwhile
        // One request at a time, from a client that reads its answers: anything else could
        // pile answers up in our memory.
        guard (busy[connection] ?? 0) == 0, channel.isWritable else {
            logger.info("a connection sent a request before reading the last answer; closed")
            channel.writeAndFlush(
                ByteBuffer(bytes: AgentMessage.encode(AgentResponse.failure(.badRequest("one request at a time: read each answer first")))),
                promise: nil)
            channel.close(promise: nil)
            return
        }
        busy[connection, default: 0] += 1
        switch rules.reloadIfChanged(logger: logger) {
        case .rules(let changed)?: (machine.rules, machine.rulesUnknown) = (changed, false)
        case .unusable?: machine.rulesUnknown = true
        case nil: break
        }
        perform(machine.receive(line, from: connection, now: Self.now()))
    }

    func closed(_ connection: AgentStateMachine.Connection) {
        channels[connection] = nil
        busy[connection] = nil
        machine.closed(connection)
    }

    /// At most this many `--confirm` questions wait; more connections are refused at once.
    static let maximumPendingQuestions = 4
    private var pendingQuestions = 0

    private func isOpen(_ connection: AgentStateMachine.Connection) -> Bool { channels[connection] != nil }

    private func answer(_ connection: AgentStateMachine.Connection, allowed: Bool, reason: String?) {
        pendingQuestions = max(0, pendingQuestions - 1)
        perform(machine.confirmed(connection, allowed: allowed, reason: reason, now: Self.now()))
    }

    private func fetched(_ key: AgentStateMachine.Key, _ result: Result<AgentStateMachine.Token, AgentFailure>) {
        perform(machine.fetched(key, result, now: Self.now()))
    }

    private func perform(_ actions: [AgentStateMachine.Action]) {
        // The answers written so far: a stop waits for them (the process ends right after).
        var written: [EventLoopFuture<Void>] = []
        for action in actions {
            switch action {
            case .reply(let connection, let response):
                busy[connection] = max(0, (busy[connection] ?? 1) - 1)
                if let channel = channels[connection] {
                    written.append(channel.writeAndFlush(ByteBuffer(bytes: AgentMessage.encode(response))))
                }
            case .fetch(let key, let minTTL):
                let sessions = self.sessions
                Task {
                    let result = await sessions.fetch(key, minTTL: minTTL)
                    self.fetched(key, result)
                }
            case .sign(let connection, let request, let storage):
                let sessions = self.sessions
                Task {
                    let result = await sessions.sign(request, storage: storage)
                    self.perform(self.machine.signed(connection, result, request: request, now: Self.now()))
                }
            case .markRejected(let group, let storage, let token, let connection):
                let sessions = self.sessions
                Task {
                    await sessions.markRejected(token, group: group, storage: storage)
                    self.perform([.reply(connection, AgentResponse(ok: true))])
                }
            case .confirm(let connection, let group, _, let asker, let what):
                let previous = questions
                let (confirmer, askpass) = (self.confirmer, self.askpass)
                pendingQuestions += 1
                guard pendingQuestions <= Self.maximumPendingQuestions else {
                    pendingQuestions -= 1
                    perform(machine.confirmed(connection, allowed: false, reason: "too many questions wait already", now: Self.now()))
                    continue
                }
                let question = "authkit: \(asker) asks for \(ProviderText.displayable(what)). Allow?"
                questions = Task {
                    await previous?.value
                    // A connection that went away while it waited is not asked about.
                    guard self.isOpen(connection) else { return self.answer(connection, allowed: false, reason: nil) }
                    if let confirmer {
                        self.answer(connection, allowed: await confirmer(question), reason: nil)
                    } else if let askpass {
                        let yes = await askpass.ask(question)
                        self.answer(
                            connection, allowed: yes, reason: yes ? nil : "not allowed: \(askpass.program) said no or did not answer")
                    } else {
                        self.answer(
                            connection, allowed: false,
                            reason: "‘\(ProviderText.displayable(group))’ needs a person's yes and this agent has no way to ask: "
                                + "set AUTHKIT_ASKPASS for the agent to a program that asks (as SSH_ASKPASS)")
                    }
                }
            case .journal(let event):
                journal?.send(event, message: Self.message(event))
            case .close(let connection):
                channels[connection]?.close(promise: nil)
            case .warn(let message):
                logger.warning("\(message)")
            case .stop:
                logger.info("agent stopping on request")
                // The one who asked hears "ok" before the agent goes: stop once the answer is
                // written (or could not be).
                let onStop = self.onStop
                if let last = written.last {
                    last.whenComplete { _ in onStop?() }
                } else {
                    onStop?()
                }
            }
        }
    }

    /// An event in one line, for the journal's MESSAGE.
    static func message(_ event: AgentEvent) -> String {
        let what = event.token == "id_token" ? "id_token" : event.token == "dpop_proof" ? "DPoP proof" : "token"
        let group = event.group ?? "?"
        let who = event.asker ?? "?"
        switch event.kind {
        case .served: return "\(what) of \(group) for \(event.account ?? "?") served to \(who)"
        case .refused: return "\(what) of \(group) refused to \(who): \(event.reason ?? "")"
        case .failed: return "\(what) of \(group) for \(who) failed: \(event.reason ?? "")"
        case .asked: return "asked whether \(who) may have a \(what) of \(group)"
        case .allowed: return "allowed \(who) a \(what) of \(group)"
        case .opened, .closed: return "forward \(event.via ?? "?") \(event.kind.rawValue) (groups: \(event.group ?? "all"))"
        }
    }

    static func now() -> AgentStateMachine.Now {
        let elapsed = ContinuousClock.now - Self.origin
        let monotonic = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return AgentStateMachine.Now(wall: Date().timeIntervalSince1970, monotonic: monotonic)
    }

    private static let origin = ContinuousClock.now
}
