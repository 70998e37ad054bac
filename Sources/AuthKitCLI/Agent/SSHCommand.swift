import SecretStore
import ArgumentParser
import AuthKit
import ChildProcess

#if canImport(Glibc)
import Glibc
#endif

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `authkit ssh`: the system's ssh, with a restricted agent socket forwarded to the remote.
struct SSHCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ssh",
        abstract: "Run ssh with this machine's sign-in forwarded (access tokens only) for the session.",
        usage:
            "authkit ssh [--group <name> ...] [--scope <scope> ...] [--resource <uri> ...] [--for <time>] [--id-token] [--] [<ssh options>] <destination> [<command> ...]",
        discussion: """
            Opens a restricted agent socket (as `authkit agent forward`), runs the system's ssh \
            with it forwarded to a random path on the remote host (-R, StreamLocalBindUnlink) \
            and AUTHKIT_AGENT_SOCK pointing there, and closes it when ssh ends. On the remote \
            host, `authkit token`, git with the authkit helper, kubectl and docker get access \
            tokens from this sign-in (a command there that names no group uses the one \
            forwarded): no sign-in, no keyring, no refresh token there. If sshd \
            made that socket open to other accounts (its StreamLocalBindMask), the session ends \
            before running anything.

              authkit ssh dev.example.com
              authkit ssh --group com.example.shared -- -p 2222 me@dev.example.com git pull

            The remote account (and root there) can ask for the forwarded groups' access tokens \
            while the session lasts, as with `ssh -A`; see SECURITY.md. The remote shell must \
            be POSIX (sh, bash, zsh …). AUTHKIT_SSH names another ssh program.
            """)

    @OptionGroup var forward: ForwardOptions

    @Argument(
        parsing: .captureForPassthrough, help: ArgumentHelp("ssh's options, the destination and the command.", valueName: "ssh arguments"))
    var arguments: [String] = []

    func validate() throws {
        // ssh's own words are passed through, but ssh has no -h: a first --help or -h is ours.
        if let first = arguments.first, first == "--help" || first == "-h" { throw CleanExit.helpRequest(self) }
        if forward.confirm {
            throw ValidationError(
                "--confirm needs the terminal, which ssh uses for the session: run `authkit agent forward --confirm` in another terminal and forward its socket with ssh -R"
            )
        }
        guard Self.split(arguments.first == "--" ? Array(arguments.dropFirst()) : arguments) != nil else {
            throw ValidationError("name the host to connect to, e.g. authkit ssh me@dev.example.com")
        }
    }

    func run() async throws {
        let words = arguments.first == "--" ? Array(arguments.dropFirst()) : arguments
        guard let (options, destination, command) = Self.split(words) else { throw ExitStatus.usage }
        var policy = try await forward.policy()
        let environment = ProcessInfo.processInfo.environment
        let local: String, remote: String, key: String
        let server: AgentServer
        do throws(AgentServer.Failure) {
            local = try AgentServer.privateDirectory(environment: environment) + "/" + AgentServer.randomName(prefix: "ssh-") + ".sock"
            remote = "/tmp/" + (try AgentServer.randomName(prefix: "authkit-agent-")) + ".sock"
            // Nothing is served until the far side, its check passed, opens the forward with it.
            key = try (1...4).map { _ throws(AgentServer.Failure) in try AgentServer.randomName(prefix: "") }.joined()
            policy.openKey = key
            // Quiet in the session's terminal: only what went wrong (AUTHKIT_LOG=info for more).
            server = try await AgentService.start(
                path: local, policy: policy, environment: environment, logLevel: .warning,
                via: "authkit ssh \(ProviderText.displayable(destination))")
        } catch {
            Terminal.printError(Voice.error(error.description))
            throw ExitStatus.usage
        }
        let ssh = environment["AUTHKIT_SSH"].flatMap { $0.isEmpty ? nil : $0 } ?? "ssh"
        var argv = [ssh, "-o", "ExitOnForwardFailure=yes", "-o", "StreamLocalBindUnlink=yes", "-R", "\(remote):\(local)"]
        if command.isEmpty && isatty(0) == 1 { argv.append("-t") }
        argv += options + [destination, Self.remoteCommand(socket: remote, key: key, command: command, destination: destination)]
        var spawnOptions = ChildProcess.Options(argv)
        spawnOptions.stdin = .inherit
        spawnOptions.stdout = .inherit
        spawnOptions.stderr = .inherit
        // Ctrl-C is ssh's to pass on, not ours to die of (as a shell waits for its job).
        signal(SIGINT, SIG_IGN)
        signal(SIGQUIT, SIG_IGN)
        let spawned: ChildProcess.Spawned
        do { spawned = try ChildProcess.spawn(spawnOptions) } catch {
            await server.close()
            Terminal.printError(Voice.error(error.description, hint: "install OpenSSH's client, or name it with AUTHKIT_SSH"))
            throw ExitCode(error.shellStatus)
        }
        let end = await OwnThread.run { ChildProcess.wait(spawned.pid) }
        await server.close()
        if end.status != 0 { throw ExitCode(end.status) }
    }

    /// ssh's options that take a value (ssh(1), OpenSSH 9).
    static let optionsWithValue = Set("BbcDEeFIiJLlmOoPpQRSWw")

    /// The words before the destination (ssh's options), the destination, and the command.
    static func split(_ words: [String]) -> ([String], String, [String])? {
        var index = 0
        var options: [String] = []
        while index < words.count {
            let word = words[index]
            if word == "--" {
                options.append(word)
                index += 1
                break
            }
            guard word.hasPrefix("-"), word.count > 1 else { break }
            options.append(word)
            index += 1
            // -p 22 (value apart) vs -p22; a cluster like -tt or -vp 22 ends in a value option.
            let letters = word.dropFirst()
            if let valueAt = letters.firstIndex(where: { optionsWithValue.contains($0) }), letters.index(after: valueAt) == letters.endIndex
            {
                guard index < words.count else { return nil }
                options.append(words[index])
                index += 1
            }
        }
        guard index < words.count else { return nil }
        return (options, words[index], Array(words[(index + 1)...]))
    }

    /// What the remote shell runs: the socket checked, then exported with the forward's `key`
    /// (the first authkit there that uses the socket opens the forward with it; until then it
    /// serves nothing, so another account that reached a socket sshd made too wide, in the moment
    /// before the check, got nothing), the command (or a login shell), and the socket's file
    /// removed when it ends.
    ///
    /// The socket must be this account's alone (no permission for group or others, no ACL):
    /// sshd makes it with its StreamLocalBindMask, which an administrator may have opened up.
    /// A wider socket ends the session before the command runs, rather than being narrowed
    /// with chmod: a socket's mode is checked when a process connects, so a connection another
    /// account made before a chmod would keep getting tokens.
    ///
    /// `~/.local/bin`, where a user installs authkit without root, is put first on the remote
    /// PATH as a login shell would (a command ssh runs reads no profile); a command that fails
    /// where no authkit is found says how to put it there.
    static func remoteCommand(socket: String, key: String, command: [String], destination: String = "HOST") -> String {
        let run = command.isEmpty ? #""${SHELL:-/bin/sh}" -l"# : command.joined(separator: " ")
        let path = #"case ":$PATH:" in *":$HOME/.local/bin:"*) ;; *) PATH="$HOME/.local/bin:$PATH"; export PATH;; esac"#
        let missing = Voice.error(
            "there is no authkit on the remote host's PATH or in ~/.local/bin, and the forwarded sign-in is used through it",
            hint: "put it in ~/.local/bin there, e.g. from this machine: ssh \(destination) mkdir -p .local/bin && "
                + "scp \"$(command -v authkit)\" \(destination):.local/bin/ (README, Install)")
        let notFound =
            "if [ $authkit_status -ne 0 ] && ! command -v authkit >/dev/null 2>&1; then printf '%s\\n' \(Setup.shellQuoted(missing)) >&2; fi"
        let refusal = Voice.error(
            "the forwarded socket \(socket) on the remote host is open to other accounts there "
                + "(sshd's StreamLocalBindMask made it wider than 0600), so the session ends before running anything",
            hint: "ask the remote host's administrator for StreamLocalBindMask 0177 (OpenSSH's default); "
                + "or run `authkit agent forward` and forward its socket with ssh -R into a folder only you can enter")
        let check =
            "set -- $(LC_ALL=C ls -ld \(socket) 2>/dev/null); case $1 in s???------|s???------.) ;; "
            + "*) printf '%s\\n' \(Setup.shellQuoted(refusal)) >&2; rm -f \(socket); exit 255;; esac"
        return
            "\(check); \(path); AUTHKIT_AGENT_SOCK=\(socket) AUTHKIT_FORWARD_KEY=\(key); export AUTHKIT_AGENT_SOCK AUTHKIT_FORWARD_KEY; "
            + "\(run); authkit_status=$?; rm -f \(socket); \(notFound); exit $authkit_status"
    }
}
