import SecretStore
import ArgumentParser
import AuthKit
import AuthKitCore

#if canImport(Glibc)
import Glibc
#endif

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What a forwarded (restricted) socket serves, as `agent forward` and `ssh` take it. Not
/// ``SignInOptions``: a forward names a list of groups (`--group` repeats), each served from
/// the store its profile names, and `--account` restricts what is served rather than choosing
/// a sign-in — the same names (``OptionName``), another meaning.
struct ForwardOptions: ParsableArguments {
    @Option(
        name: .customLong(OptionName.group),
        help: ArgumentHelp(
            "A group whose access tokens the socket serves (repeatable; default: the profile's group).", valueName: "name"))
    var groups: [String] = []

    @Option(
        name: .customLong("allow-scope"),
        help: ArgumentHelp(
            "A scope, beyond the sign-in's own, that may be asked for (repeatable; default: none).", valueName: "scope"))
    var allowedScopes: [String] = []

    @Option(
        name: .customLong(OptionName.scope),
        help: ArgumentHelp(
            "Hand out tokens for at most these scopes, fewer than the sign-in's (repeatable): the other side cannot ask for more.",
            valueName: "scope"))
    var scopes: [String] = []

    @Option(
        name: .customLong(OptionName.resource),
        help: ArgumentHelp(
            "Hand out tokens for this API only (RFC 8707 resource indicator, repeatable): the other side gets no other.",
            valueName: "uri"))
    var resources: [String] = []

    @Option(
        name: .customLong("allow-resource"),
        help: ArgumentHelp(
            "An API a client may ask a token for (RFC 8707, repeatable; default: none), as a [credential] mapping's resource = does; "
                + "unlike --resource, the sign-in's own tokens are still served.",
            valueName: "uri"))
    var allowedResources: [String] = []

    @Option(
        name: .customLong("for"),
        help: ArgumentHelp("Serve for this long only (e.g. 10m, 2h); then the socket hands out nothing.", valueName: "time"))
    var lifetime: String?

    @Flag(name: .customLong("id-token"), help: "Also serve id_tokens (kubectl with an OIDC API server).")
    var idTokens = false

    @Flag(help: "Ask on this terminal before each new connection's first token (as ssh-add -c).")
    var confirm = false

    @Option(
        name: .customLong(OptionName.account),
        help: ArgumentHelp(
            "The one account served (when a forwarded group holds several; default: any of the group's).", valueName: "name"))
    var account: String?

    @Option(
        name: .customLong(OptionName.profile),
        help: ArgumentHelp("The profile whose group and store are served (as for `token`).", valueName: "name"))
    var profile: String?

    func validate() throws {
        try TokenRequest.checkResources(resources)
        try TokenRequest.checkResources(allowedResources)
        if !resources.isEmpty, !allowedResources.isEmpty {
            throw ValidationError("--allow-resource does not go with --resource (which already names what is served)")
        }
        if let lifetime, UnlockCommand.seconds(lifetime) == nil {
            throw ValidationError("--for: use a number with s, m, h or d (e.g. 10m), at most 365d")
        }
    }

    /// The restricted policy: each group with the store its profile names. Says first, on
    /// standard error, which served group nobody is signed in to here: its requests through the
    /// forward would fail on the other side, where the fix cannot be made.
    func policy() async throws -> AgentPolicy {
        let served = try servedGroups()
        for (group, storage) in served.sorted(by: { $0.key < $1.key }) {
            // Which items there are, no secret read; the store cannot say (locked, absent): the
            // agent reports it per request.
            guard let name = try? SecretGroup(group),
                let items = try? await storage.makeStore().items(
                    matching: ItemQuery(group: name, kind: TokenRecord.kind), loadSecrets: false),
                items.isEmpty
            else { continue }
            Terminal.printError(
                "authkit: warning: nobody is signed in in the group \(group) here; requests for it through this forward fail "
                    + "until `\(loginCommand(SignInSelector(profile: profile, group: group)))` here")
        }
        var policy = AgentPolicy.restricted(groups: served, extraScopes: Set(allowedScopes), idTokens: idTokens)
        policy.confirm = confirm
        policy.narrowScopes = scopes.isEmpty ? nil : Array(Set(scopes)).sorted()
        policy.resources = Array(Set(resources)).sorted()
        policy.allowedResources = Set(allowedResources)
        policy.lifetime = lifetime.flatMap(UnlockCommand.seconds).map(Double.init)
        if let account { policy.accounts = Dictionary(uniqueKeysWithValues: served.keys.map { ($0, account) }) }
        return policy
    }

    /// Each served group with the store its profile names.
    private func servedGroups() throws -> [String: StorageChoice] {
        var served: [String: StorageChoice] = [:]
        let names = groups.isEmpty ? [nil] : groups.map(Optional.some)
        for name in names {
            do throws(AuthKitError) {
                let resolved = try SignInSelector(profile: profile, group: name).resolveProfile()
                served[resolved.group] = resolved.storage
            } catch {
                throw failure(error)
            }
        }
        return served
    }
}

/// `authkit agent forward`: a restricted socket for a container, a sandbox or a remote host.
struct AgentForwardCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "forward",
        abstract: "Open a restricted socket that hands out access tokens only, for a container or sandbox.",
        discussion: """
            Serves, until it is stopped (Ctrl-C, SIGTERM, or its terminal closing: SIGHUP), access tokens of the listed groups — \
            id_tokens only with --id-token, other scopes only those listed with --allow-scope, a \
            resource's tokens only for those listed with --allow-resource (or, with --resource, only those) — and \
            nothing else: no refresh token, no sign-in, sign-out or erase. Prints the socket's \
            path on standard output once it listens. Give that socket to the container:

              authkit agent forward --socket /tmp/ak/agent.sock &
              docker run --user "$(id -u):$(id -g)" -v /tmp/ak/agent.sock:/run/authkit/agent.sock \\
                  -e AUTHKIT_AGENT_SOCK=/run/authkit/agent.sock IMAGE
              bwrap ... --bind /tmp/ak/agent.sock /run/authkit/agent.sock \\
                  --setenv AUTHKIT_AGENT_SOCK /run/authkit/agent.sock CMD

            Whoever can open the socket (the user, and root) gets those access tokens while it \
            is open; see SECURITY.md. For SSH use `authkit ssh`.

            Less than the sign-in: --resource URI hands out only tokens for that API (RFC 8707) \
            and --scope S only tokens for at most those scopes, each checked before it is \
            handed out (a provider that does not narrow gives nothing); the other side cannot \
            ask for wider ones, and the provider is never asked for another resource through \
            the socket. --for 10m ends the serving after that time (a token handed out before \
            lives its own lifetime). For an AI agent in a sandbox:

              authkit agent forward --resource https://git.example.com/ --scope read_repository \
                  --for 1h --socket /tmp/ak/agent.sock &
            """)

    @OptionGroup var forward: ForwardOptions

    @Option(help: ArgumentHelp("Where to make the socket (default: a new private path).", valueName: "path"))
    var socket: String?

    func run() async throws {
        let policy = try await forward.policy()
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
        var confirmer: (@Sendable (String) async -> Bool)?
        if policy.confirm {
            guard let terminal = ConfirmTerminal.open() else {
                Terminal.printError(Voice.error("--confirm needs a terminal to ask on", hint: "run it in a terminal, or without --confirm"))
                throw ExitStatus.usage
            }
            confirmer = { question in await terminal.ask(question) }
        }
        // It says what it serves itself (below); its log shows only what went wrong unless
        // AUTHKIT_LOG asks for more. It belongs to its terminal: closing that ends it.
        try await AgentService.serve(
            path: path, policy: policy, environment: environment, confirmer: confirmer, logLevel: .warning, endsOnHangup: true,
            via: "authkit agent forward (\(path))"
        ) {
            Terminal.printOut(path)
            Terminal.printError(
                "authkit: forwarding \(policy.groups?.keys.sorted().joined(separator: ", ") ?? "") on \(path); Ctrl-C ends it.")
        }
    }
}

/// The terminal `agent forward --confirm` asks on: the controlling terminal, opened once.
final class ConfirmTerminal: Sendable {
    let fd: Int32

    private init(fd: Int32) { self.fd = fd }

    static func open() -> ConfirmTerminal? {
        let fd = Glibc.open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        return ConfirmTerminal(fd: fd)
    }

    /// "QUESTION [y/N]", and whether the answer starts with y.
    func ask(_ question: String) async -> Bool {
        let fd = self.fd
        return await OwnThread.run {
            // Only what is typed after the question answers it.
            tcflush(fd, TCIFLUSH)
            let prompt = Array("authkit: \(question) [y/N] ".utf8)
            _ = prompt.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            var line: [UInt8] = []
            var byte: UInt8 = 0
            while true {
                let count = read(fd, &byte, 1)
                if count < 0 && errno == EINTR { continue }
                guard count > 0, byte != 0x0A else { break }
                if line.count < 64 { line.append(byte) }  // the rest of a long line is read, not kept
            }
            let answer = String(decoding: line, as: UTF8.self).lowercased()
            return answer == "y" || answer == "yes"
        }
    }
}
