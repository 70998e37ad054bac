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
            // The private folder `agent start` made for it goes too, once empty.
            let folder = String(path[..<(path.lastIndex(of: "/") ?? path.endIndex)])
            if folder.split(separator: "/").last?.hasPrefix("authkit-") == true {
                for _ in 0..<40 where rmdir(folder) != 0 && errno == ENOTEMPTY { try? await Task.sleep(for: .milliseconds(25)) }
            }
            Terminal.printError("authkit: the agent at \(path) stopped.")
            // For `eval "$(authkit agent stop)"`; a person at a terminal is told instead.
            if Terminal.stdoutIsTerminal {
                if ProcessInfo.processInfo.environment["AUTHKIT_AGENT_SOCK"] == path {
                    Terminal.printError("authkit: this shell still names it: run `unset AUTHKIT_AGENT_SOCK`.")
                }
            } else {
                Terminal.printOut("unset AUTHKIT_AGENT_SOCK;")
            }
        case .answer(let response):
            Terminal.printError(
                Voice.error(response.error.map { ProviderText.clean($0.message) ?? "refused" } ?? "the agent refused to stop"))
            throw ExitStatus.usage
        case .unavailable(let reason):
            Terminal.printError("authkit: no agent is running (\(reason)).")
        }
    }
}
