import ArgumentParser
import AuthKit

/// `authkit credential git get|store|erase`: a git credential helper (gitcredentials(7),
/// git-credential(1)).
struct CredentialGitCommand: AsyncParsableCommand {
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

    @Option(name: .customLong("min-ttl"), help: ArgumentHelp("Seconds the token must still be valid.", valueName: "seconds"))
    var minTTL: Int = 300

    @Option(help: ArgumentHelp("The user name to answer (default: the mapping's, else oauth2).", valueName: "name"))
    var username: String?

    @Argument(help: ArgumentHelp("What git asks: get, store or erase.", valueName: "action"))
    var action: String

    func validate() throws {
        guard TokenRequest.minTTLRange.contains(minTTL) else { throw ValidationError("--min-ttl must be between 0 and 86400 seconds") }
    }

    func run() async throws {
        try await Self.serve(CredentialFlags(options, minTTL: minTTL, action: action, username: username))
    }

    static func serve(_ flags: CredentialFlags) async throws {
        let action = flags.action, minTTL = flags.minTTL, username = flags.username
        try await CredentialPlugin.run { () async throws(CredentialPlugin.Failure) in
            // Checked here, not in validate(): a plug-in's error is one line, not a usage page.
            guard ["get", "store", "erase"].contains(action) else {
                throw CredentialPlugin.Failure(message: "authkit: unknown action ‘\(action)’: git asks get, store or erase", code: ExitStatus.usage)
            }
            let request = try GitCredentialRequest(parsing: try CredentialPlugin.readInput())
            if action == "store" { return }  // git stores after every success; nothing to keep
            guard let target = try Self.target(for: request, flags: flags) else { return }  // unmapped: git asks its next helper
            switch action {
            case "get":
                let token = try await CredentialPlugin.accessToken(for: target, insecureStorage: flags.insecureStorage, storage: flags.storage, minTTL: minTTL)
                Terminal.write(fd: 1, request.answer(token: token, username: username ?? target.username))
            default:  // erase: the rejected password, if it is ours, is stale now — nothing more
                guard let rejected = request.rejectedToken else { return }
                try await CredentialPlugin.markRejected(rejected, for: target, insecureStorage: flags.insecureStorage, storage: flags.storage)
            }
        }
    }

    /// The flags' sign-in for any host, else the config's mapping for this one (nil: none).
    private static func target(for request: GitCredentialRequest, flags options: CredentialFlags) throws(CredentialPlugin.Failure) -> CredentialTarget? {
        if options.namesSignIn { return options.target(entry: "\(request.scheme)://\(request.host)") }
        guard !request.host.isEmpty else { return nil }
        let file = try CredentialPlugin.config()
        let mapping: CredentialTarget?
        do throws(ConfigurationError) {
            mapping = try CredentialMap.gitTarget(
                protocol: request.scheme, host: request.host, path: request.path, username: request.username, in: file)
        } catch {
            throw CredentialPlugin.Failure(message: "authkit: \(error)", code: ExitStatus.usage)
        }
        guard var mapped = mapping else { return nil }
        if let account = options.account { mapped.account = account }
        if !options.scopes.isEmpty { mapped.scopes = options.scopes }
        return mapped
    }
}

/// git's request: `key=value` lines up to a blank line or the end. Unknown keys are ignored.
struct GitCredentialRequest: Equatable {
    var scheme = ""
    var host = ""
    var path: String?
    var username: String?
    var password: String?
    var authtype: String?
    var credential: String?
    var capabilities: Set<String> = []

    init(parsing text: String) throws(CredentialPlugin.Failure) {
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let line = line.hasSuffix("\r") ? line.dropLast() : line
            if line.isEmpty { break }
            guard let equals = line.firstIndex(of: "=") else {
                throw CredentialPlugin.Failure(message: "authkit: git sent a line without ‘=’; expected key=value lines", code: ExitStatus.usage)
            }
            let key = String(line[..<equals]), value = String(line[line.index(after: equals)...])
            switch key {
            case "protocol": scheme = value.lowercased()
            case "host": host = value
            case "path": path = value
            case "username": username = value
            case "password": password = value
            case "authtype": authtype = value
            case "credential": credential = value
            case "capability[]": capabilities.insert(value)
            default: continue  // url, wwwauth[], password_expiry_utc, oauth_refresh_token …
            }
        }
    }

    /// The token git says a server rejected (erase): the password, or a Bearer credential.
    var rejectedToken: String? {
        if let credential, authtype?.lowercased() == "bearer" { return credential }
        return password
    }

    /// The `get` answer: Basic (every git) or, when git announces the capability, Bearer.
    func answer(token: AccessToken, username: String) -> String {
        let expiry = Int(clamping: token.expiresAt.timeIntervalSince1970)
        if capabilities.contains("authtype") {
            return "capability[]=authtype\nauthtype=Bearer\ncredential=\(token.value)\npassword_expiry_utc=\(expiry)\n"
        }
        return "username=\(username)\npassword=\(token.value)\npassword_expiry_utc=\(expiry)\n"
    }
}
