import ArgumentParser
import AuthKit
import AuthKitCore
import ChildProcess
import JOSE

#if canImport(Glibc)
import Glibc
#endif

/// `authkit exec -- CMD ARGS…`: any other program gets the token in an environment variable.
struct ExecCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "exec",
        abstract: "Run a command with a fresh access token in an environment variable.",
        usage: "authkit exec [--env <NAME>] [<options>] -- <command> [<argument> ...]",
        discussion: """
            Runs CMD with the shared sign-in's access token (refreshed first when needed) in \
            the environment variable --env (default AUTHKIT_TOKEN), never on a command line, \
            where every user could read it with ps. authkit replaces itself with CMD, so CMD's \
            exit status (128+N when a signal ends it) is the command's.

              authkit exec --env GITHUB_TOKEN -- gh api user
              authkit exec --scope 499b84ac-1321-427f-aa17-267ca6975798/.default \\
                  --env AZURE_DEVOPS_EXT_PAT -- az devops project list
            """
    )

    /// The sign-in, account, scopes and --min-ttl, as the credential plug-ins take them.
    @OptionGroup var options: CredentialOptions

    @Option(name: .customLong("env"), help: ArgumentHelp("The variable that carries the token.", valueName: "NAME"))
    var variable: String = ExecRules.defaultVariable

    // Only the words after `--`: `authkit exec --help` is help, never a command named --help.
    @Argument(parsing: .postTerminator, help: ArgumentHelp("The command and its arguments, after --.", valueName: "command"))
    var command: [String] = []

    func validate() throws {
        var words = command
        if words.first == "--" { words.removeFirst() }
        guard !words.isEmpty else { throw ValidationError("name the command to run after --, e.g. authkit exec -- curl …") }
        guard ExecRules.isVariableName(variable) else {
            throw ValidationError("--env needs a variable name (letters, digits and _, not starting with a digit)")
        }
        if let reason = ExecRules.refusedVariable(variable) {
            throw ValidationError("--env \(variable) is refused: \(reason); name a variable of your own, e.g. --env GITHUB_TOKEN")
        }
    }

    /// The program as the agent's log should name it: its path on PATH, else as given.
    static func programPath(_ name: String?) -> String? {
        ExecRules.programPath(name, path: getenv("PATH").map { String(cString: $0) })
    }

    func run() async throws {
        var words = command
        if words.first == "--" { words.removeFirst() }
        let token: AccessToken
        // Resolved once: the program the agent is told of is the one that runs.
        let program = Self.programPath(words.first)
        do throws(AuthKitError) {
            let profile = try options.session.resolveProfile()
            token = try await options.session.session(for: profile, program: program).validAccessToken(
                account: options.account, minimumLifetime: .seconds(options.minTTL), scopes: options.scopes.isEmpty ? nil : options.scopes,
                resources: options.resources)
        } catch {
            if error.category == .loginNeeded {
                Terminal.printError(Voice.error(error.summary, hint: signInHint(options.session.settings)))
                throw ExitStatus.loginNeeded
            }
            throw AgentNotice.failure(
                error,
                await AgentNotice.storeNotice(for: error, command: "exec", refusal: nil, environment: options.session.settings.environment))
        }
        // The token goes into CMD's environment only (visible in /proc/PID/environ to this user
        // and root, unlike argv), beside this process's own but for what authkit put there
        // itself. CMD starts with no signal blocked or ignored (this thread's mask would
        // otherwise pass through exec): Ctrl-C, timeout(1), systemd and a hang-up must stop it.
        let failure = ChildProcess.replaceProcess(
            with: words, path: program ?? words[0], dropping: TPM.variablesSetHere + ExecRules.handedOverVariables + [variable],
            adding: ["\(variable)=\(token.value)"])
        let reason = String(cString: strerror(failure))
        Terminal.printError(Voice.error("cannot run \(words[0]): \(reason)"))
        throw ExitCode(failure == ENOENT ? 127 : 126)
    }
}
