import ArgumentParser
import AuthKit
import ChildProcess
import Logging

#if canImport(Glibc)
import Glibc
#endif

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Runs a server until it is stopped or signalled, then removes its socket.
enum AgentService {
    /// `endsOnHangup`: a server that belongs to a terminal (a foreground forward) ends with it
    /// on SIGHUP, as on Ctrl-C; the agent, which outlives the terminal that started it, ignores it.
    static func serve(
        path: String, policy: AgentPolicy, environment: [String: String], inherited: Int32? = nil,
        confirmer: (@Sendable (String) async -> Bool)? = nil, logLevel: Logger.Level = .info, endsOnHangup: Bool = false,
        via: String? = nil, ready: () -> Void = {}
    ) async throws {
        if !AgentServer.protectMemory() {
            Terminal.printError("authkit: warning: could not forbid core dumps of the agent (prctl)")
        }
        let server: AgentServer
        do throws(AgentServer.Failure) {
            server = try await start(
                path: path, policy: policy, environment: environment, inherited: inherited, confirmer: confirmer, logLevel: logLevel,
                endsOnHangup: endsOnHangup, via: via)
        } catch {
            Terminal.printError(Voice.error(error.description))
            throw ExitStatus.usage
        }
        ready()
        await server.run()
        await server.close()
        // close() said "closed" (a forward's); a signal during the rest of the shutdown says
        // nothing more.
        AgentSignals.disarmFarewell()
    }

    static func start(
        path: String, policy: AgentPolicy, environment: [String: String], inherited: Int32? = nil,
        confirmer: (@Sendable (String) async -> Bool)? = nil, logLevel: Logger.Level = .info, endsOnHangup: Bool = false,
        via: String? = nil
    ) async throws(AgentServer.Failure) -> AgentServer {
        if !endsOnHangup { signal(SIGHUP, SIG_IGN) }
        signal(SIGPIPE, SIG_IGN)
        var configuration = AgentServer.Configuration(socketPath: path, policy: policy)
        configuration.inheritedDescriptor = inherited
        configuration.confirmer = confirmer
        configuration.askpass = AgentAskpass(environment: environment)
        if let named = environment["AUTHKIT_ASKPASS"], !named.isEmpty, !named.hasPrefix("/") {
            // A relative program is never run (whose PATH?): every question would be a no, unsaid.
            Terminal.printError(
                "authkit: warning: AUTHKIT_ASKPASS=\(named) is not an absolute path and is not used; questions are refused until it is")
        }
        configuration.journal = AgentJournal(environment: environment)
        configuration.via = via
        configuration.environment = environment
        let server = try await AgentServer.start(
            configuration, sessions: AgentSessions(environment: environment), logger: LogSetup.agentLogger(level: logLevel))
        // A forward ended by a signal still says so in the journal.
        if let (journal, datagram) = await server.farewell() { AgentSignals.sayOnSignal(journal: journal, datagram: datagram) }
        // systemd's socket file is systemd's to remove.
        if inherited == nil { AgentSignals.removeOnSignal(path, hangup: endsOnHangup) } else { AgentSignals.exitOnSignal() }
        return server
    }
}
