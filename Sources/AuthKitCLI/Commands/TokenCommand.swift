import ArgumentParser
import AuthKit

/// `authkit token`: a valid access token on standard output and nothing else.
struct TokenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token",
        abstract: "Print a valid access token of the shared sign-in (refreshing it if needed).",
        usage: "authkit token [--min-ttl <seconds>] [--scope <scope> ...] [<options>]",
        discussion: """
            Prints the access token and a newline on standard output, nothing else, so that \
            scripts can use it directly:

              curl -H "Authorization: Bearer $(authkit token)" https://graph.microsoft.com/v1.0/me

            A token that lives at least --min-ttl seconds more is printed straight from the \
            token store; otherwise it is refreshed first, once for all tools of the group at a \
            time. When nobody is signed in, or the sign-in needs a new login, it prints a \
            one-line hint on standard error and exits 1.
            """
    )

    @OptionGroup var session: SessionOptions

    @OptionGroup var accountOption: AccountOption
    var account: String? { accountOption.account }

    @Option(name: .customLong(OptionName.minTTL), help: ArgumentHelp("Seconds the token must still be valid.", valueName: "seconds"))
    var minTTL: Int = 60

    @Option(
        name: .customLong(OptionName.scope),
        help: ArgumentHelp(
            "A scope the token must carry (repeatable); other scopes than the sign-in's are obtained with the refresh token.",
            valueName: "scope"))
    var scopes: [String] = []

    @Flag(help: "Print one JSON object: access_token, token_type, expires_at, expires_in, scopes, account, issuer.")
    var json = false

    @Flag(name: .customLong("allow-shorter"), help: "Print a fresh token even if it lives less than --min-ttl (else exit 8).")
    var allowShorter = false

    @Flag(name: .customLong("id-token"), help: "Print a verified id_token instead (e.g. for a Kubernetes API server with OIDC).")
    var idToken = false

    func validate() throws {
        try TokenRequest.checkMinTTL(minTTL)
        if idToken && (json || !scopes.isEmpty) { throw ValidationError("--id-token takes neither --json nor --scope") }
    }

    var request: TokenRequest {
        TokenRequest(
            selector: session.selector(account: account), minTTL: minTTL, scopes: scopes, json: json, idToken: idToken,
            allowShorter: allowShorter)
    }

    func run() async throws {
        try await request.run()
    }
}

extension TokenRequest {
    /// The one check of `--min-ttl`, for every command that takes it (the fast paths decline
    /// a value outside ``minTTLRange``, so this message is the only one).
    static func checkMinTTL(_ seconds: Int) throws {
        guard minTTLRange.contains(seconds) else { throw ValidationError("--min-ttl must be between 0 and 86400 seconds") }
    }
}
