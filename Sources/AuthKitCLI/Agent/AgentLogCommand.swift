import ArgumentParser
import AuthKit

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `authkit agent log`: who got which token from the agent, and who was refused.
struct AgentLogCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "log", abstract: "Show who the agent gave tokens to, refused or asked about (never a token).",
        discussion: """
            The agent keeps its last 10 000 events in memory: each token served or refused (and \
            why), each question asked and answered — with the time, group, account, scopes and \
            the asker: its program, pid, command line, parents up to the session, its systemd \
            unit or container, and the forward it came through. Where a systemd journal runs, \
            the agent also sends each event there, so after the agent is gone:

              journalctl --user -t authkit
              journalctl --user -t authkit AUTHKIT_GROUP=com.example.shared -o verbose

            A forward (`authkit agent forward`, `authkit ssh`) keeps its own events; they reach \
            the journal. What attribution can prove and what it cannot: docs/agent.md.
            """)

    @OptionGroup var socket: AgentSocketOption

    @Option(help: ArgumentHelp("Only the events of this group.", valueName: "name"))
    var group: String?

    @Flag(help: "Keep printing new events as they happen (Ctrl-C ends it).")
    var follow = false

    @Flag(help: "One JSON object per line.")
    var json = false

    func run() async throws {
        guard let path = socket.path() else {
            Terminal.printError(Voice.error("no agent: neither AUTHKIT_AGENT_SOCK nor XDG_RUNTIME_DIR is set"))
            throw ExitStatus.loginNeeded
        }
        var since = 0
        while true {
            let request = AgentRequest.log(since: since, group: group)
            switch await AgentClient(path: path).send(request) {
            case .answer(let response) where response.ok:
                let events = response.events ?? []
                for event in events { try print(event) }
                since = events.last?.sequence ?? since
                if events.count == AgentStateMachine.eventsPerAnswer { continue }
                guard follow else { return }
                try await Task.sleep(for: .seconds(1))
            case .answer(let response):
                Terminal.printError(Voice.error(response.error?.message ?? "the agent refused"))
                throw ExitStatus.usage
            case .unavailable(let reason):
                Terminal.printError(Voice.error("no agent answers at \(path) (\(reason))"))
                throw ExitStatus.loginNeeded
            }
        }
    }

    private func print(_ event: AgentEvent) throws {
        if json {
            Terminal.printOut(try JSONOutput.render(event, pretty: false))
            return
        }
        let time = RelativeTime.rfc3339(Date(timeIntervalSince1970: Double(event.time)))
        var line = "\(time) \(event.kind.rawValue)"
        if let token = event.token { line += " \(token == "id_token" ? "id_token" : "token")" }
        if let group = event.group { line += " \(group)" }
        if let account = event.account { line += " (\(account))" }
        if let asker = event.asker { line += " — \(asker)" }
        if let reason = event.reason { line += ": \(reason)" }
        Terminal.printOut(ProviderText.displayable(line))
    }
}
