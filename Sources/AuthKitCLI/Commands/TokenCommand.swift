import AuthKitCore
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

            With --exchange --audience A (RFC 8693), where the provider offers token \
            exchange, the sign-in's token is exchanged for one for A, with at most --scope, \
            checked and shared the same way.

            A narrower token: --scope with fewer scopes than the sign-in's, and --resource \
            naming the API the token is for (RFC 8707), are asked of the provider with the \
            refresh token and kept beside the sign-in's own token, shared by every tool that \
            asks the same. The provider's answer is checked, never trusted: more scopes than \
            asked, or a token whose audience is not only the resource (or that does not say \
            its audience), prints nothing and exits 4, naming what the provider would not \
            narrow.
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

    @Option(
        name: .customLong(OptionName.resource),
        help: ArgumentHelp("The API the token is for (RFC 8707 resource indicator, repeatable).", valueName: "uri"))
    var resources: [String] = []

    @Flag(help: "Exchange the sign-in's token for one for --audience or --resource (RFC 8693 token exchange), with at most --scope.")
    var exchange = false

    @Option(help: ArgumentHelp("With --exchange: the audience the token is for (a client id, an API's name).", valueName: "audience"))
    var audience: String?

    @Flag(help: "Print one JSON object: access_token, token_type, expires_at, expires_in, scopes, account, issuer.")
    var json = false

    @Flag(name: .customLong("allow-shorter"), help: "Print a fresh token even if it lives less than --min-ttl (else exit 8).")
    var allowShorter = false

    @Flag(name: .customLong("id-token"), help: "Print a verified id_token instead (e.g. for a Kubernetes API server with OIDC).")
    var idToken = false

    func validate() throws {
        try TokenRequest.checkMinTTL(minTTL)
        if idToken && (json || !scopes.isEmpty || !resources.isEmpty) {
            throw ValidationError("--id-token takes neither --json, --scope nor --resource")
        }
        try TokenRequest.checkResources(resources)
        if audience != nil, !exchange { throw ValidationError("--audience is for --exchange") }
        if exchange, audience == nil, resources.isEmpty {
            throw ValidationError("--exchange needs --audience or --resource: what the token is for")
        }
        if exchange, idToken { throw ValidationError("--exchange gives an access token, not an id_token") }
        if let audience, audience.isEmpty || audience.utf8.count > 1024 || audience.unicodeScalars.contains(where: { $0.value < 0x20 }) {
            throw ValidationError("--audience: a printable name, at most 1024 bytes")
        }
    }

    var request: TokenRequest {
        TokenRequest(
            selector: session.selector(account: account), minTTL: minTTL, scopes: scopes, resources: resources,
            exchangeAudience: audience, exchange: exchange, json: json, idToken: idToken, allowShorter: allowShorter)
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

    /// The one check of `--resource` (RFC 8707: absolute URIs without a fragment).
    static func checkResources(_ resources: [String]) throws {
        if let bad = resources.first(where: { !TokenText.isResource($0) }) {
            throw ValidationError("--resource ‘\(bad)’ is not an absolute URI without a fragment (RFC 8707)")
        }
    }
}
