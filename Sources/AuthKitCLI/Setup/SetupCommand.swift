import ArgumentParser
import AuthKit
import ChildProcess
import SecretStore
import JOSE

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#endif

/// `authkit setup git|docker|kubectl`: writes each client's configuration for the plug-ins.
struct SetupCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "setup",
        abstract: "Configure \(CredentialAdapters.setupNames) to use the shared sign-in, or start the agent with systemd.",
        usage: "authkit setup <client> [<options>]\n       authkit setup --list",
        discussion: """
            Each subcommand writes only what it needs, keeps everything else, does nothing \
            when run twice, updates what it wrote when run again with other settings, and \
            with --print shows what it would write instead. --list shows every client authkit \
            serves and whether it is set up here.
            """,
        subcommands: CredentialAdapters.all.flatMap { $0.setupCommands } + [SetupAgentCommand.self]
    )

    @Flag(name: .customLong("list"), help: "List the clients authkit serves and whether each is set up.")
    var list = false

    func run() async throws {
        guard list else { throw CleanExit.helpRequest(self) }
        var text = ""
        for adapter in CredentialAdapters.all {
            let setups = adapter.setupCommands
            if setups.isEmpty {
                text += Self.row(adapter.client, "no setup; see `authkit credential \(adapter.client) --help`")
            }
            for setup in setups {
                text += Self.row(setup.configuration.commandName ?? adapter.client, "\(setup.status())")
            }
        }
        text += Self.row("agent", "\(SetupAgentCommand.status())")
        Terminal.printData(text)
    }

    static func row(_ client: String, _ state: String) -> String {
        client + String(repeating: " ", count: max(1, 9 - client.count)) + state + "\n"
    }
}

/// The `authkit setup CLIENT` subcommand of an adapter.
protocol SetupClientCommand: AsyncParsableCommand {
    /// Whether the client is set up here (reads the client's configuration; writes nothing).
    static func status() -> SetupStatus
}

/// What `authkit setup --list` says of one client, in one wording for every client.
enum SetupStatus: CustomStringConvertible {
    /// Not set up; `hint` is the command that sets it up.
    case notSetUp(hint: String)
    /// Set up for these hosts, registries, profiles or users (none: the client as a whole), in
    /// the file `place` when there is one.
    case setUp(for: [String] = [], place: String? = nil)
    /// The client's configuration cannot be read here (`git not found`).
    case unknown(String)

    var description: String {
        switch self {
        case .notSetUp(let hint): return "not set up (\(hint))"
        case .setUp(let targets, let place):
            return "set up" + (targets.isEmpty ? "" : " for " + targets.joined(separator: ", ")) + (place.map { " (\($0))" } ?? "")
        case .unknown(let reason): return reason
        }
    }

    /// Set up for `targets` in `place`, or not set up (`hint`) when there are none.
    static func of(_ targets: [String], place: String? = nil, hint: String) -> SetupStatus {
        targets.isEmpty ? .notSetUp(hint: hint) : .setUp(for: targets, place: place)
    }
}
