import ArgumentParser
import AuthKit
import ChildProcess

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
    var variable: String = "AUTHKIT_TOKEN"

    // Only the words after `--`: `authkit exec --help` is help, never a command named --help.
    @Argument(parsing: .postTerminator, help: ArgumentHelp("The command and its arguments, after --.", valueName: "command"))
    var command: [String] = []

    func validate() throws {
        var words = command
        if words.first == "--" { words.removeFirst() }
        guard !words.isEmpty else { throw ValidationError("name the command to run after --, e.g. authkit exec -- curl …") }
        guard Self.isVariableName(variable) else {
            throw ValidationError("--env needs a variable name (letters, digits and _, not starting with a digit)")
        }
        if let reason = Self.refusedVariable(variable) {
            throw ValidationError("--env \(variable) is refused: \(reason); name a variable of your own, e.g. --env GITHUB_TOKEN")
        }
    }

    /// Variables the dynamic loader, the shell or the program's own start-up read before CMD
    /// could: a token there would be loaded, executed, searched or printed (`LD_PRELOAD`
    /// made ld.so print it). Why one is refused, or nil.
    static func refusedVariable(_ name: String) -> String? {
        if name.hasPrefix("LD_") { return "the dynamic loader reads LD_* variables" }
        let libc: Set = ["GLIBC_TUNABLES", "GCONV_PATH", "LOCPATH", "NLSPATH", "HOSTALIASES", "RESOLV_HOST_CONF", "TZDIR"]
        if libc.contains(name) || name.hasPrefix("MALLOC_") { return "the C library reads \(name) as the program starts" }
        let shell: Set = ["PATH", "HOME", "IFS", "SHELL", "PWD", "BASH_ENV", "ENV", "CDPATH", "PS4", "SHELLOPTS", "BASHOPTS"]
        if shell.contains(name) { return "the shell and other programs read \(name) before the command runs" }
        if name.hasPrefix("BASH_FUNC_") { return "bash runs BASH_FUNC_* variables as functions" }
        // Options an interpreter reads (and often prints) before the program does.
        let runtimes: Set = [
            "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS", "NODE_OPTIONS", "PYTHONSTARTUP", "PYTHONPATH",
            "PYTHONHOME", "PERL5OPT", "PERL5LIB", "RUBYOPT", "RUBYLIB",
        ]
        if runtimes.contains(name) { return "interpreters read \(name) as options or code before the command runs" }
        if name.hasPrefix("AUTHKIT_"), name != "AUTHKIT_TOKEN" {
            return "authkit itself reads AUTHKIT_* (one the command runs, git's helper say, would take it as a setting)"
        }
        let resolver: Set = ["LOCALDOMAIN", "RES_OPTIONS"]
        if resolver.contains(name) { return "the resolver reads \(name) and would send it in DNS queries" }
        let proxies: Set = ["http_proxy", "https_proxy", "all_proxy", "no_proxy", "ftp_proxy"]
        if proxies.contains(name.lowercased()) { return "HTTP clients read \(name) as the proxy to send requests through" }
        if ["LANG", "LANGUAGE", "TERM"].contains(name) || name.hasPrefix("LC_") { return "every program reads \(name) as it starts" }
        let commands: Set = ["EDITOR", "VISUAL", "PAGER", "BROWSER", "GIT_EDITOR", "GIT_PAGER", "GIT_SSH", "GIT_SSH_COMMAND"]
        if commands.contains(name) || name.hasSuffix("ASKPASS") { return "programs run \(name) as a command" }
        return nil
    }

    static func isVariableName(_ name: String) -> Bool {
        guard let first = name.utf8.first, !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first) else { return false }
        return name.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) || $0 == 0x5F }
    }

    /// The program as the agent's log should name it: its path on PATH, else as given.
    static func programPath(_ name: String?) -> String? {
        guard let name, !name.isEmpty else { return nil }
        guard !name.contains("/") else { return name }
        let path = getenv("PATH").map { String(cString: $0) } ?? "/usr/bin:/bin"
        // As execvp searches: an empty entry is the current directory.
        for entry in path.split(separator: ":", omittingEmptySubsequences: false) {
            let directory = entry.isEmpty ? "." : String(entry)
            if access("\(directory)/\(name)", X_OK) == 0 { return "\(directory)/\(name)" }
        }
        return name
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
        // The token goes into this process's environment and CMD inherits it: visible in
        // /proc/PID/environ to this user and root only, unlike argv.
        // CMD starts with no signal blocked or ignored (this thread's mask would otherwise
        // pass through exec): Ctrl-C, timeout(1), systemd and a hang-up must stop it.
        setenv(variable, token.value, 1)
        let failure = ChildProcess.replaceProcess(with: words, path: program)
        let reason = String(cString: strerror(failure))
        unsetenv(variable)
        Terminal.printError(Voice.error("cannot run \(words[0]): \(reason)"))
        throw ExitCode(failure == ENOENT ? 127 : 126)
    }
}
