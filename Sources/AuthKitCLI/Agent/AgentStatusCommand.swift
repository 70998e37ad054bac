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
        switch await AgentClient(path: path).send(AgentRequest.hello) {
        case .answer(let hello) where hello.ok:
            let kind = hello.restricted == true ? "a forwarded (restricted) agent socket" : "the agent"
            Terminal.printOut(
                "✓ \(kind) at \(path): pid \(hello.pid.map(String.init) ?? "?"), authkit \(ProviderText.displayable(hello.agent ?? "?"))")
            guard hello.restricted != true, case .answer(let stats) = await AgentClient(path: path).send(AgentRequest.stats),
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
