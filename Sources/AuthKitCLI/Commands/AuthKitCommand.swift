import ArgumentParser
import AuthKit
import ChildProcess
import JOSE
import SecretStore

#if canImport(Glibc)
import Glibc
#endif

/// `authkit`: one shared sign-in for the tools on this machine.
@main
struct AuthKitCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "authkit",
        abstract: "One shared sign-in for the command-line tools on this machine.",
        discussion: """
            authkit signs in to an OpenID Connect provider (Microsoft identity platform, Google, \
            Keycloak ...) with the authorization-code flow and PKCE, checks every id_token's \
            signature against the provider's published keys, and keeps the tokens under a \
            group name that several tools can share, in the store --storage names \
            (AUTHKIT_STORAGE, storage = in the config file; later commands use the store the \
            group's sign-in went to):
            \(storeLines)

            Settings come from flags, then AUTHKIT_* variables, then the config file:
              authkit help environment   the variables
              authkit help config        the file, ~/.config/authkit/config
              authkit config             the effective settings and their sources
              authkit help exit-codes    what each exit status means

            Examples:
              authkit login --issuer https://accounts.example.com --client-id my-cli
              authkit token | sed 's/^/Authorization: Bearer /' | curl -H @- URL
              authkit exec --env GITHUB_TOKEN -- gh api user
            """,
        version: BuildCommit.version,
        subcommands: [
            LoginCommand.self,
            StatusCommand.self,
            TokenCommand.self,
            LogoutCommand.self,
            UnlockCommand.self,
            LockCommand.self,
            SearchCommand.self,
            RequestCommand.self,
            CredentialCommand.self,
            ExecCommand.self,
            SetupCommand.self,
            ConfigCommand.self,
            AccountCommand.self,
            AgentCommand.self,
            SSHCommand.self,
            CompletionCommand.self,
            JWTCommand.self,
        ]
    )

    /// The stores, one a line with what `--storage` says of each (StoreKinds, in its order), so
    /// that `--help` and `man authkit` name every store and none that is gone.
    static var storeLines: String {
        StorageChoice.allCases.map { choice in
            let name = "  " + choice.rawValue
            return name + String(repeating: " ", count: max(1, 19 - name.count)) + HelpTopics.wrapped(choice.kind.summary, column: 19)
        }.joined(separator: "\n")
    }

    /// Parses and runs the command, mapping errors to the documented exit codes
    /// (ExitStatus): usage errors exit 2, not ArgumentParser's default 64.
    static func main() async {
        _ = MainThread.id
        // Before anything opens one: what `exec` passes on is the parent's, never ours. (Only
        // for `exec`: the hot paths need not read /proc.)
        if CommandLine.arguments.dropFirst().first == "exec" { _ = ChildProcess.inheritedDescriptors }
        // While this is the only thread: a TPM opened later replaces these values in place.
        TPM.prepareEnvironment()
        LogSetup.bootstrapFromEnvironment()
        do {
            // The hot path scripts run in loops skips ArgumentParser (TokenFastPath).
            if let request = TokenFastPath.parse(Array(CommandLine.arguments.dropFirst())) {
                // From the agent, before the concurrency runtime starts a thread: most of
                // what an agent-served `authkit token` would otherwise cost.
                let profile = try? request.session.resolveProfile()
                if let profile, try request.runThroughAgentNow(profile) { return }
                try await request.run(profile: profile)
                return
            }
            // Run under a client's own name for its plug-in (docker-credential-authkit, a link
            // `authkit setup docker` makes; git-credential-authkit, so `credential.helper =
            // authkit` works), the client passes only its action: `authkit credential CLIENT ACTION`.
            let name = CommandLine.arguments.first.map { String($0.split(separator: "/").last ?? "") } ?? ""
            // cargo runs a provider as `PROGRAM --cargo-plugin` whatever else its configuration
            // says (the rest comes in its request): authkit itself named there is the cargo plug-in.
            let cargo = Array(CommandLine.arguments.dropFirst()) == ["--cargo-plugin"] ? "cargo" : nil
            let client = CredentialAdapters.aliased(name)?.client ?? cargo
            let arguments =
                client.map { ["credential", $0] + CommandLine.arguments.dropFirst() } ?? Array(CommandLine.arguments.dropFirst())
            // Before the command list is built: that walks every command's configuration, and
            // its dynamic casts scan every protocol conformance in the binary (a plug-in's
            // millisecond; kubectl runs its plug-in twice per command).
            if let (client, flags) = CredentialFastPath.parse(arguments) {
                try await CredentialFastPath.run(client: client, flags: flags)
                return
            }
            let commands = configuration.subcommands.map { $0.configuration.commandName ?? "" }
            if HelpTopics.handle(arguments, commands: commands) { return }
            if arguments.first != "---completion" { HelpTopics.checkCommandLine(arguments, commands: commands) }
            var command = try parseAsRoot(arguments)
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            let code = exitCode(for: error)
            let message = fullMessage(for: error)
            if code == .success {
                if !message.isEmpty { Terminal.printOut(message) }
                Glibc.exit(0)
            }
            if !message.isEmpty { Terminal.printError(Voice.argumentParserMessage(message)) }
            // ArgumentParser reports usage errors as EX_USAGE (64); authkit documents 2.
            Glibc.exit(code == .validationFailure ? ExitStatus.usage.rawValue : code.rawValue)
        }
    }
}
