import ArgumentParser
import AuthKit
import Synchronization

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `authkit search`: find people in the directory through Microsoft Graph.
struct SearchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "search",
        abstract: "Search the directory (Microsoft Graph users) by name or mail.",
        usage: "authkit search <text> [--top <n>] [--format <format>] [<options>]",
        discussion: """
            Lists users whose display name, given name, surname, mail or user principal name \
            starts with TEXT (case-insensitive), with their display name, user principal name, \
            mail and phone numbers. TEXT is sent as an OData string literal, so quotes are safe \
            (authkit search "O'Brien").

            Needs the User.ReadBasic.All permission: the built-in microsoft profile asks for it; \
            otherwise sign in with `authkit login --scope User.ReadBasic.All`.

            Output (--format): `table`, aligned to the terminal's width (long cells end in …), \
            when standard output is a terminal; `tsv`, one user per line with tab-separated \
            fields NAME, USERNAME, MAIL, PHONE and no header, when it is not (a pipe, a file); \
            `json`, one JSON object per line (--json). A missing value is an empty cell.

            Examples:
              authkit search ada
              authkit search "O'Brien" --top 5 --format json
              authkit search ad | cut -f3        # mail addresses
            """
    )

    /// How the users are printed.
    enum Format: String, ExpressibleByArgument, CaseIterable {
        case table, tsv, json
    }

    @OptionGroup var session: SessionOptions

    @Argument(help: "The beginning of a name or mail address.")
    var text: String

    @Option(help: ArgumentHelp("At most this many users (1–999).", valueName: "n"))
    var top: Int = 25

    @OptionGroup var accountOption: AccountOption
    var account: String? { accountOption.account }

    @Option(help: ArgumentHelp("table, tsv or json (default: table on a terminal, else tsv).", valueName: "format"))
    var format: Format?

    @Flag(help: "The same as --format json.")
    var json = false

    func validate() throws {
        if json, let format, format != .json {
            throw ValidationError("--json means --format json; it contradicts --format \(format.rawValue)")
        }
        guard (1...999).contains(top) else { throw ValidationError("--top must be between 1 and 999") }
        guard !text.allSatisfy({ $0 == " " || $0 == "\t" }) else { throw ValidationError("the search text is empty") }
    }

    func run() async throws {
        let users: [GraphUser]
        do {
            let profile = try session.resolveProfile()
            let shared = try session.session(for: profile, context: .person)
            let accounts = try await shared.accounts()
            guard let signedIn = accounts.first(where: { account == nil || $0.account == account }) else {
                throw AuthKitError.notSignedIn(group: profile.group, account: account)
            }
            guard let base = profile.graphBaseURL ?? signedIn.graphBaseURL, let baseURL = URL(string: base) else {
                throw AuthKitError.unsupported(
                    "no Microsoft Graph URL: sign in with a profile that has graph_url (the built-in microsoft profile has one) "
                        + "or set AUTHKIT_GRAPH_URL=https://graph.microsoft.com/v1.0")
            }
            users = try await Self.search(text, top: top, session: shared, account: account ?? signedIn.account, baseURL: baseURL)
        } catch let error as AuthKitError {
            switch error {
            case .graph(.forbidden(let permission, _)):
                throw failure(error, hint: "Run `\(loginCommand(session, extra: "--scope \(permission)"))` to grant it.")
            case _ where error.category == .loginNeeded:
                throw failure(error, hint: signInHint(session.settings))
            default:
                throw failure(error)
            }
        }
        switch json ? .json : format ?? (Terminal.stdoutIsTerminal ? .table : .tsv) {
        case .json: printJSONLines(users)
        case .tsv: printTSV(users)
        case .table: printTable(users)
        }
    }

    /// GraphClient reports a failure to get a token as `GraphError.token` (text only), which
    /// would make a dead refresh token exit 4 (provider error) instead of 1 (login needed), and
    /// a locked keyring 4 instead of 3: keep the session's own error and throw that instead.
    static func search(_ text: String, top: Int, session: SharedSession, account: String, baseURL: URL) async throws(AuthKitError)
        -> [GraphUser]
    {
        let tokenFailure = Mutex<AuthKitError?>(nil)
        let client = GraphClient(session: session, account: account, baseURL: baseURL, transport: session.transport) { error in
            tokenFailure.withLock { $0 = error }
        }
        do throws(GraphError) {
            return try await client.searchUsers(text, top: top)
        } catch {
            if case .token = error, let underlying = tokenFailure.withLock({ $0 }) { throw underlying }
            throw .graph(error)
        }
    }

    private func printJSONLines(_ users: [GraphUser]) {
        for user in users {
            do throws(JSONOutputError) {
                Terminal.printData(try JSONOutput.render(SearchRow(user: user), pretty: false, keys: .asDeclared))
            } catch {
                Terminal.printError("authkit: \(error)")
            }
        }
    }

    /// NAME, USERNAME, MAIL, PHONE of one user, cleaned for a terminal; "" where missing.
    private static func cells(_ user: GraphUser) -> [String] {
        let phones = user.businessPhones + (user.mobilePhone.map { ["\($0) (mobile)"] } ?? [])
        return [user.displayName, user.userPrincipalName, user.mail, phones.isEmpty ? nil : phones.joined(separator: ", ")]
            .map { ProviderText.clean($0, limit: 200) ?? "" }
    }

    private func reportNone() {
        Terminal.printError("authkit: no users found whose name or mail starts with ‘\(ProviderText.clean(text, limit: 200) ?? "")’")
    }

    private func printTable(_ users: [GraphUser]) {
        guard !users.isEmpty else { return reportNone() }
        let header = ["NAME", "USERNAME", "MAIL", "PHONE"]
        let ascii = Voice.asciiOnly(fd: 1)
        Terminal.printOut(
            TableFormatter.format([header] + users.map(Self.cells), maxWidth: Terminal.columns, ellipsis: ascii ? "..." : "…"))
    }

    /// For scripts: one line per user, fields separated by tabs (none inside a field), no header.
    private func printTSV(_ users: [GraphUser]) {
        guard !users.isEmpty else { return reportNone() }
        let lines = users.map { user in
            Self.cells(user).map { $0.replacing("\t", with: " ") }.joined(separator: "\t")
        }
        Terminal.printData(lines.joined(separator: "\n"))
    }
}

/// One line of `search --json`: Graph's field names, each always present (`null` when the
/// directory has no value), so the shape is stable for scripts (README, "search --json").
struct SearchRow: Encodable {
    var displayName: String?
    var userPrincipalName: String?
    var mail: String?
    var businessPhones: [String]
    var mobilePhone: String?

    init(user: GraphUser) {
        (displayName, userPrincipalName, mail) = (user.displayName, user.userPrincipalName, user.mail)
        (businessPhones, mobilePhone) = (user.businessPhones, user.mobilePhone)
    }
}
