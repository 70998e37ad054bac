import ArgumentParser
import AuthKit
import AuthKitCore

/// `authkit credential git get|store|erase`: a git credential helper (gitcredentials(7),
/// git-credential(1)).
struct CredentialGitCommand: CredentialAdapterCommand {
    static let configuration = CommandConfiguration(
        commandName: "git",
        abstract: "A git credential helper: the shared sign-in's access token as the password.",
        usage: "authkit credential git [<options>] get|store|erase",
        discussion: """
            git runs it with get, store or erase and key=value lines on standard input. \
            get answers username= and password= (the access token, at least --min-ttl seconds \
            left; with git 2.46 or later announcing capability[]=authtype, a Bearer credential \
            instead). store does nothing. erase marks a rejected token stale so that the next \
            request refreshes it; it never deletes or revokes the sign-in.

            Without --profile or --group, only hosts mapped in the config file are served:

              [credential "https://dev.azure.com"]
              profile = microsoft
              scopes = 499b84ac-1321-427f-aa17-267ca6975798/.default

            Other hosts get an empty answer, and git asks its next helper.
            """
    )

    @OptionGroup var options: CredentialOptions

    @Option(help: ArgumentHelp("The user name to answer (default: the mapping's, else oauth2).", valueName: "name"))
    var username: String?

    @Argument(help: ArgumentHelp("What git asks: get, store or erase.", valueName: "action"))
    var action: String

    typealias Adapter = GitCredentialAdapter

    var flags: CredentialFlags { options.flags(action: action, own: username.map { ["--username": $0] } ?? [:]) }
}

/// git's credential helper protocol: `key=value` lines in, `username=`/`password=` (or a
/// Bearer credential) out, for mapped hosts only.
enum GitCredentialAdapter: CredentialAdapter {
    static let client = "git"
    /// So that `credential.helper = authkit` finds it, as git names helpers.
    static let executableAlias: String? = "git-credential-authkit"
    static let actions = ["get", "store", "erase"]
    static let ownOptions: [String: String?] = ["--username": nil]
    static var command: any CredentialAdapterCommand.Type { CredentialGitCommand.self }
    static var setupCommands: [any SetupClientCommand.Type] { [SetupGitCommand.self] }

    nonisolated(nonsending) static func respond(to flags: CredentialFlags) async throws(CredentialPlugin.Failure) -> CredentialAnswer {
        let text = try CredentialPlugin.readInput(), request: GitCredentialRequest
        do throws(GitCredentialRequest.Malformed) {
            request = try GitCredentialRequest(parsing: text)
        } catch {
            throw CredentialPlugin.Failure(
                message: "authkit: git sent a line without ‘=’; expected key=value lines", code: ExitStatus.usage)
        }
        if flags.action == "store" { return .none }  // git stores after every success; nothing to keep
        guard let target = try target(for: request, flags: flags) else { return .none }  // unmapped: git asks its next helper
        switch flags.action {
        case "get":
            let username = flags.own["--username"] ?? target.username
            guard GitCredentialRequest.isOneLine(username) else {
                throw CredentialPlugin.Failure(
                    message: "authkit: the user name for \(ProviderText.displayable(target.entry)) has a control character",
                    code: ExitStatus.usage)
            }
            let token = try await CredentialPlugin.accessToken(for: target, flags)
            return CredentialAnswer(
                output: request.answer(
                    token: token.value, expiresAt: Int(clamping: token.expiresAt.timeIntervalSince1970), username: username))
        default:  // erase: the rejected password, if it is ours, is stale now — nothing more
            guard let rejected = request.rejectedToken else { return .none }
            try await CredentialPlugin.markRejected(rejected, for: target, flags)
            return .none
        }
    }

    /// The flags' sign-in for any host, else the config's mapping for this one (nil: none).
    private static func target(for request: GitCredentialRequest, flags: CredentialFlags) throws(CredentialPlugin.Failure)
        -> CredentialTarget?
    {
        // Never a token in the clear: https, or http on loopback (a local test server).
        guard CredentialMap.carriesTokens(scheme: request.scheme, host: request.host) else {
            if request.scheme == "http", flags.action == "get" {
                Terminal.printError(
                    "authkit: no token for http://\(ProviderText.displayable(request.host)): it would cross the network unencrypted; use https"
                )
            }
            return nil
        }
        if flags.namesSignIn { return flags.target(entry: "\(request.scheme)://\(request.host)") }
        guard !request.host.isEmpty else {
            LogSetup.logger.debug("git sent no host; nothing to map")
            return nil
        }
        let file = try CredentialPlugin.config()
        let mapping: CredentialTarget?
        do throws(ConfigProblem) {
            mapping = try CredentialMap.gitTarget(
                protocol: request.scheme, host: request.host, path: request.path, username: request.username, in: file)
        } catch {
            throw CredentialPlugin.Failure(message: "authkit: \(error)", code: ExitStatus.usage)
        }
        // Why a host got a token or nothing, for AUTHKIT_LOG=debug (never a token).
        let asked = "\(request.scheme)://\(request.host)" + (request.path.map { "/" + $0 } ?? "")
        guard let mapped = mapping else {
            LogSetup.logger.debug(
                "no [credential] mapping for this URL; git asks its next helper", metadata: ["url": "\(asked)", "config": "\(file.path)"])
            return nil
        }
        LogSetup.logger.debug(
            "mapped",
            metadata: [
                "url": "\(asked)", "entry": "[credential \"\(mapped.entry)\"]",
                "config": "\(file.path):\(file.credentials[mapped.entry]?.line ?? 0)",
            ])
        return try flags.applied(to: mapped)
    }
}
