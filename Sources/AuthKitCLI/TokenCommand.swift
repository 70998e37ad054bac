import ArgumentParser
import AuthKit

/// `authkit token`: a valid access token on standard output and nothing else.
struct TokenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token",
        abstract: "Print a valid access token of the shared sign-in (refreshing it if needed).",
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

    @Option(help: ArgumentHelp("The account, when the group holds several (default: the most recent sign-in).", valueName: "name"))
    var account: String?

    @Option(name: .customLong("min-ttl"), help: ArgumentHelp("Seconds the token must still be valid.", valueName: "seconds"))
    var minTTL: Int = 60

    @Option(name: .customLong("scope"), help: ArgumentHelp(
        "A scope the token must carry (repeatable); other scopes than the sign-in's are obtained with the refresh token.",
        valueName: "scope"))
    var scopes: [String] = []

    func validate() throws {
        guard (0...86_400).contains(minTTL) else { throw ValidationError("--min-ttl must be between 0 and 86400 seconds") }
    }

    func run() async throws {
        do {
            let profile = try session.resolveProfile()
            let shared = try session.session(for: profile)
            let token = try await shared.validAccessToken(
                account: account, minimumLifetime: .seconds(minTTL), scopes: scopes.isEmpty ? nil : scopes)
            Terminal.write(fd: 1, token.value + "\n")
        } catch {
            switch error.category {
            case .loginNeeded:
                // One line: scripts log stderr, and `$(authkit token)` leaves stdout empty.
                Terminal.printError("authkit: \(error); run `\(loginCommand(session))` to sign in")
                throw ExitStatus.loginNeeded
            default:
                throw failure(error)
            }
        }
    }
}
