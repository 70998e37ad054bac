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
