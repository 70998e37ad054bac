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

/// `authkit agent`: a per-user process that serves tokens from memory on a unix socket.
struct AgentCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "agent",
        abstract: "Serve tokens from memory to this user's tools, and forward them to SSH sessions and containers.",
        discussion: """
            The agent answers token requests on a unix socket, by default \
            $XDG_RUNTIME_DIR/authkit/agent.sock (AUTHKIT_AGENT_SOCK names another). `token`, \
            `exec` and the credential plug-ins ask it first and read the store themselves when \
            it is not there — the same answers either way, only faster. It holds access tokens \
            and id_tokens only; refresh tokens stay in the store. AUTHKIT_AGENT=off bypasses it.

              eval "$(authkit agent start)"     # no systemd: start one, export its socket
              authkit setup agent               # systemd: start it with the session
              authkit agent status
              authkit agent forward --group com.example.shared   # a restricted socket for a container

            See docs/agent.md and docs/agent-protocol.md.
            """,
        subcommands: [
            AgentStartCommand.self, AgentStopCommand.self, AgentStatusCommand.self, AgentLogCommand.self, AgentRunCommand.self,
            AgentForwardCommand.self,
        ]
    )
}

/// Where the agent's socket is, as commands take it.
struct AgentSocketOption: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "The agent's socket (default: AUTHKIT_AGENT_SOCK, else $XDG_RUNTIME_DIR/authkit/agent.sock).", valueName: "path"))
    var socket: String?

    /// The socket to use, or nil when neither the option, the environment nor a runtime
    /// directory names one.
    func path() -> String? {
        if let socket { return socket }
        var environment = ProcessInfo.processInfo.environment
        environment["AUTHKIT_AGENT"] = nil
        return AgentClient.socketPath(environment: environment)
    }
}

/// `authkit agent run`: the agent in the foreground (systemd's ExecStart, or a terminal).
struct AgentRunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run the agent in the foreground (for systemd, or to watch its log).",
        discussion: "Stops on SIGTERM or SIGINT, or on `authkit agent stop`, and removes its socket.")

    @OptionGroup var socket: AgentSocketOption

    func run() async throws {
        var environment = ProcessInfo.processInfo.environment
        // Socket activation (`authkit setup agent`): systemd listens, and hands the socket over.
        let inherited = AgentServer.systemdSocket(environment: environment)
        for name in ["LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES"] { environment[name] = nil }
        let path: String
        if let inherited {
            path = inherited.path
        } else if let chosen = socket.path() {
            path = chosen
        } else {
            do throws(AgentServer.Failure) {
                path = try AgentServer.privateDirectory(environment: environment) + "/agent.sock"
            } catch {
                Terminal.printError(Voice.error(error.description))
                throw ExitStatus.usage
            }
        }
        // The agent's own sessions read the store: never the agent itself. The account a
        // request names is the asking process's (AUTHKIT_ACCOUNT there), never the agent's.
        environment["AUTHKIT_AGENT"] = "off"
        environment["AUTHKIT_ACCOUNT"] = nil
        try await AgentService.serve(path: path, policy: .owner, environment: environment, inherited: inherited?.descriptor)
    }
}

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
        configuration.journal = AgentJournal(environment: environment)
        configuration.via = via
        configuration.environment = environment
        let server = try await AgentServer.start(
            configuration, sessions: AgentSessions(environment: environment), logger: LogSetup.agentLogger(level: logLevel))
        // systemd's socket file is systemd's to remove.
        if inherited == nil { AgentSignals.removeOnSignal(path, hangup: endsOnHangup) } else { AgentSignals.exitOnSignal() }
        return server
    }
}

/// On SIGTERM or SIGINT (and SIGHUP, for a server that ends with its terminal): the socket file
/// goes with the process (async-signal-safe calls only).
enum AgentSignals {
    nonisolated(unsafe) static var socketPath: UnsafeMutablePointer<CChar>?
    nonisolated(unsafe) static var identity = stat()

    static func removeOnSignal(_ path: String, hangup: Bool = false) {
        var info = stat()
        guard lstat(path, &info) == 0 else { return }
        identity = info
        socketPath = strdup(path)
        let handler: @convention(c) (Int32) -> Void = { _ in
            if let path = AgentSignals.socketPath {
                var now = stat()
                if lstat(path, &now) == 0, now.st_dev == AgentSignals.identity.st_dev, now.st_ino == AgentSignals.identity.st_ino {
                    unlink(path)
                }
            }
            _exit(0)
        }
        signal(SIGTERM, handler)
        signal(SIGINT, handler)
        // A hang-up that was already ignored (nohup) stays ignored: that was the user's choice.
        if hangup, let previous = signal(SIGHUP, handler), unsafeBitCast(previous, to: Int.self) == unsafeBitCast(SIG_IGN, to: Int.self) {
            signal(SIGHUP, SIG_IGN)
        }
    }

    static func exitOnSignal() {
        let handler: @convention(c) (Int32) -> Void = { _ in _exit(0) }
        signal(SIGTERM, handler)
        signal(SIGINT, handler)
    }
}

/// `authkit agent start`: an agent in the background, printing what to export (ssh-agent's way).
struct AgentStartCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "start",
        abstract: "Start the agent in the background and print the shell commands that point tools at it.",
        discussion: """
            Use as `eval "$(authkit agent start)"`. Without a runtime directory (XDG_RUNTIME_DIR) \
            the socket goes into a new private directory under /tmp, which the printed \
            AUTHKIT_AGENT_SOCK names. An agent already serving the socket is left running.
            """)

    @OptionGroup var socket: AgentSocketOption

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        let path: String
        do throws(AgentServer.Failure) {
            if let chosen = socket.path() {
                path = chosen
            } else {
                path = try AgentServer.privateDirectory(environment: environment) + "/agent.sock"
            }
        } catch {
            Terminal.printError(Voice.error(error.description))
            throw ExitStatus.usage
        }
        if case .answer(let hello) = await AgentClient(path: path).send(AgentRequest(op: .hello)), hello.ok {
            Terminal.printError("authkit: an agent already serves \(path) (pid \(hello.pid.map(String.init) ?? "?")).")
            Terminal.printOut(Self.exports(path: path, pid: hello.pid))
            return
        }
        let arguments = [Setup.executablePath(), "agent", "run", "--socket", path]
        var options = ChildProcess.Options(arguments)
        options.newProcessGroup = true
        let spawned: ChildProcess.Spawned
        do { spawned = try ChildProcess.spawn(options) } catch {
            Terminal.printError(Voice.error(error.description))
            throw ExitStatus.usage
        }
        // Up to five seconds for it to answer; it is not our child to reap after that
        // (a double fork is not needed: it outlives us and init adopts it).
        for _ in 0..<100 {
            if case .answer(let hello) = await AgentClient(path: path).send(AgentRequest(op: .hello)), hello.ok {
                Terminal.printOut(Self.exports(path: path, pid: hello.pid))
                return
            }
            if let end = ChildProcess.poll(spawned.pid) {
                Terminal.printError(
                    Voice.error(
                        "the agent did not start (exit \(end.status))", hint: "run `authkit agent run --socket \(path)` to see why"))
                throw ExitStatus.usage
            }
            try? await Task.sleep(for: .milliseconds(50))
        }
        Terminal.printError(Voice.error("the agent did not answer within 5 s", hint: "run `authkit agent run --socket \(path)` to see why"))
        throw ExitStatus.usage
    }

    static func exports(path: String, pid: Int32?) -> String {
        "AUTHKIT_AGENT_SOCK=\(Setup.shellQuoted(path)); export AUTHKIT_AGENT_SOCK;\necho authkit agent pid \(pid.map(String.init) ?? "?");"
    }
}

/// `authkit agent stop`.
struct AgentStopCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stop", abstract: "Stop the agent (tools read the store themselves again).")

    @OptionGroup var socket: AgentSocketOption

    func run() async throws {
        guard let path = socket.path() else {
            Terminal.printError(Voice.error("no agent socket is named", hint: "set AUTHKIT_AGENT_SOCK or pass --socket"))
            throw ExitStatus.usage
        }
        switch await AgentClient(path: path).send(AgentRequest(op: .stop)) {
        case .answer(let response) where response.ok:
            Terminal.printError("authkit: the agent at \(path) stopped.")
            Terminal.printOut("unset AUTHKIT_AGENT_SOCK;")
        case .answer(let response):
            Terminal.printError(
                Voice.error(response.error.map { ProviderText.clean($0.message) ?? "refused" } ?? "the agent refused to stop"))
            throw ExitStatus.usage
        case .unavailable(let reason):
            Terminal.printError("authkit: no agent is running (\(reason)).")
        }
    }
}

/// `authkit agent status`.
struct AgentStatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status", abstract: "Say whether an agent serves this user, and where.",
        discussion: "Exit 0 when an agent answers, 1 when none does.")

    @OptionGroup var socket: AgentSocketOption

    func run() async throws {
        guard let path = socket.path() else {
            Terminal.printOut("No agent: neither AUTHKIT_AGENT_SOCK nor XDG_RUNTIME_DIR is set.")
            throw ExitStatus.loginNeeded
        }
        if ProcessInfo.processInfo.environment["AUTHKIT_AGENT"] == "off" {
            Terminal.printError("authkit: note: AUTHKIT_AGENT=off: tools do not use the agent.")
        }
        switch await AgentClient(path: path).send(AgentRequest(op: .hello)) {
        case .answer(let hello) where hello.ok:
            let kind = hello.restricted == true ? "a forwarded (restricted) agent socket" : "the agent"
            Terminal.printOut(
                "✓ \(kind) at \(path): pid \(hello.pid.map(String.init) ?? "?"), authkit \(ProviderText.displayable(hello.agent ?? "?"))")
            guard hello.restricted != true, case .answer(let stats) = await AgentClient(path: path).send(AgentRequest(op: .stats)),
                let counts = stats.counts, !counts.isEmpty
            else { return }
            for (group, count) in counts.sorted(by: { $0.key < $1.key }) {
                let last = count.lastAsker.map { "; last: \($0)" } ?? ""
                Terminal.printOut(ProviderText.displayable("  \(group): \(count.served) served, \(count.refused) refused\(last)"))
            }
        default:
            Terminal.printOut("No agent at \(path); tools read the token store themselves.")
            throw ExitStatus.loginNeeded
        }
    }
}
