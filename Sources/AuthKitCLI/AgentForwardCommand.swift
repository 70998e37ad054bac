import ArgumentParser
import AuthKit

#if canImport(Glibc)
import Glibc
#endif

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What a forwarded (restricted) socket serves, as `agent forward` and `ssh` take it.
struct ForwardOptions: ParsableArguments {
    @Option(
        name: .customLong("group"),
        help: ArgumentHelp(
            "A group whose access tokens the socket serves (repeatable; default: the profile's group).", valueName: "name"))
    var groups: [String] = []

    @Option(
        name: .customLong("scope"),
        help: ArgumentHelp(
            "A scope, beyond the sign-in's own, that may be asked for (repeatable; default: none).", valueName: "scope"))
    var scopes: [String] = []

    @Flag(name: .customLong("id-token"), help: "Also serve id_tokens (kubectl with an OIDC API server).")
    var idTokens = false

    @Option(help: ArgumentHelp("The profile whose group and store are served (as for `token`).", valueName: "name"))
    var profile: String?

    /// The restricted policy: each group with the store its profile names.
    func policy() throws -> AgentPolicy {
        var served: [String: String] = [:]
        let names = groups.isEmpty ? [nil] : groups.map(Optional.some)
        for name in names {
            do throws(AuthKitError) {
                let resolved = try SignInSelector(profile: profile, group: name).resolveProfile()
                served[resolved.group] = resolved.storage.rawValue
            } catch {
                throw failure(error)
            }
        }
        return .restricted(groups: served, extraScopes: Set(scopes), idTokens: idTokens)
    }
}

/// `authkit agent forward`: a restricted socket for a container, a sandbox or a remote host.
struct AgentForwardCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "forward",
        abstract: "Open a restricted socket that hands out access tokens only, for a container or sandbox.",
        discussion: """
            Serves, until it is stopped (Ctrl-C, SIGTERM), access tokens of the listed groups — \
            id_tokens only with --id-token, other scopes only those listed with --scope — and \
            nothing else: no refresh token, no sign-in, sign-out or erase. Prints the socket's \
            path on standard output once it listens. Give that socket to the container:

              authkit agent forward --socket /tmp/ak/agent.sock &
              docker run -v /tmp/ak/agent.sock:/run/authkit/agent.sock \\
                  -e AUTHKIT_AGENT_SOCK=/run/authkit/agent.sock IMAGE
              bwrap ... --bind /tmp/ak/agent.sock /run/authkit/agent.sock \\
                  --setenv AUTHKIT_AGENT_SOCK /run/authkit/agent.sock CMD

            Whoever can open the socket (the user, and root) gets those access tokens while it \
            is open; see SECURITY.md. For SSH use `authkit ssh`.
            """)

    @OptionGroup var forward: ForwardOptions

    @Option(help: ArgumentHelp("Where to make the socket (default: a new private path).", valueName: "path"))
    var socket: String?

    func run() async throws {
        let policy = try forward.policy()
        let environment = ProcessInfo.processInfo.environment
        let path: String
        do throws(AgentServer.Failure) {
            if let socket {
                path = socket
            } else {
                path =
                    try AgentServer.privateDirectory(environment: environment) + "/" + AgentServer.randomName(prefix: "forward-") + ".sock"
            }
        } catch {
            Terminal.printError(Voice.error(error.description))
            throw ExitStatus.usage
        }
        try await AgentService.serve(path: path, policy: policy, environment: environment) {
            Terminal.printOut(path)
            Terminal.printError(
                "authkit: forwarding \(policy.groups?.keys.sorted().joined(separator: ", ") ?? "") on \(path); Ctrl-C ends it.")
        }
    }
}
