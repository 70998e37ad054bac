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
        switch await AgentClient(path: path).send(AgentRequest.stop) {
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
