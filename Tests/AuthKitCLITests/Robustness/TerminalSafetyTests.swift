import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Nothing from outside reaches a terminal, a header or another host raw. One corpus
/// of hostile text goes through the paths others control — the stored record (any process of
/// the user can write it), flags and variables the user passes, a neighbour's request to the
/// loopback receiver — and no byte of any command's output may be a control or bidirectional
/// character from outside; stored endpoints that are not https are refused before a secret
/// goes to them.
@Suite(.serialized) struct TerminalSafetyTests {
    /// ESC sequences (screen clear, OSC 52 clipboard write), BEL, 8-bit CSI, RLO, an isolate,
    /// CR/LF, NUL, DEL, a line separator.
    static let corpus = "x\u{1B}[2J\u{1B}]52;c;ZXZpbA==\u{07}\u{9B}31m\u{202E}gpj.exe\u{2066}\r\nX-Injected: yes\u{0}\u{7F}\u{2028}y"

    /// The characters that must never come out: C0 controls but newline and tab, DEL, C1,
    /// U+2028/2029 and the bidirectional controls.
    static func steering(_ text: String) -> [String] {
        text.unicodeScalars.compactMap { scalar in
            switch scalar.value {
            case 0x0A, 0x09: return nil
            case 0x00...0x1F, 0x7F...0x9F, 0x061C, 0x200E, 0x200F, 0x2028, 0x2029, 0x202A...0x202E, 0x2066...0x2069:
                return String(format: "U+%04X", scalar.value)
            default: return nil
            }
        }
    }

    static func expectClean(_ result: ProcessResult, _ what: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let found = steering(result.stdout) + steering(result.stderr)
        #expect(found.isEmpty, "\(what) wrote \(found) (stderr: \(result.stderr.debugDescription))", sourceLocation: sourceLocation)
    }

    /// The stored record of `account`, rewritten by `change` through SecretStore, as another
    /// process of the same user could.
    static func tamper(_ world: CLIHarness, account: String, _ change: (inout [String: Any]) -> Void) throws {
        let key = try read(world, account: account) { _ in }
        var record: [String: Any] = [:]
        try read(world, account: account) { record = $0 }
        change(&record)
        let text = String(decoding: try JSONSerialization.data(withJSONObject: record, options: [.sortedKeys]), as: UTF8.self)
        let save = try world.keyring.probe(["save"] + key, stdin: text)
        try #require(save.status == 0, "save failed: \(save.stdout) \(save.stderr)")
    }

    /// Reads `account`'s stored record through the store probe; returns the probe's key arguments.
    @discardableResult
    static func read(_ world: CLIHarness, account: String, _ body: ([String: Any]) -> Void) throws -> [String] {
        let key = [
            "--group", world.group, "--issuer", world.provider.issuer.absoluteString, "--client-id", CLIHarness.clientID, "--account",
            account,
        ]
        let lookup = try world.keyring.probe(["--show-secret", "lookup"] + key)
        try #require(lookup.status == 0, "lookup failed: \(lookup.stdout) \(lookup.stderr)")
        let answer = try #require(try JSONSerialization.jsonObject(with: Data(lookup.stdout.utf8)) as? [String: Any])
        let secret = try #require((answer["item"] as? [String: Any])?["secret"] as? String, "\(lookup.stdout)")
        body(try #require(try JSONSerialization.jsonObject(with: Data(secret.utf8)) as? [String: Any]))
        return key
    }

    @Test func aTamperedRecordNeverReachesTheTerminalOrAnotherHostRaw() async throws {
        let world = try await CLIHarness.start(graph: true)
        defer { world.stop() }
        try await world.signIn(user: "ada")
        let account = "ada@example.test"
        try Self.tamper(world, account: account) { record in
            record["name"] = Self.corpus
            record["tenant_id"] = Self.corpus
            record["scopes"] = ["openid", Self.corpus]
            // Stored endpoints that leave https for another host, percent-encoded controls in them.
            record["token_endpoint"] = "http://evil.example/token%1B%5D52;c;eA==%07"
            record["revocation_endpoint"] = "http://evil.example/revoke"
            record["graph_base_url"] = "http://evil.example/%1B%5B2J/v1.0"
            record["access_token_expires_at"] = 0  // expired: the next token needs a refresh
        }

        let status = try await world.authkit(["status", "--group", world.group])
        Self.expectClean(status, "status")
        #expect(status.stdout.contains("ada@example.test"))
        let json = try await world.authkit(["status", "--json", "--group", world.group])
        Self.expectClean(json, "status --json")
        #expect(
            json.stdout.contains(#"\u001b[2J\u001b]52;c;ZXZpbA==\u0007\u009b31m\u202egpj.exe\u2066\r\nX-Injected: yes\u0000\u007f\u2028y"#),
            "status --json does not escape the stored name: \(json.stdout)")

        // The refresh would send the refresh token to http://evil.example: refused before any
        // connection, with the URL shown encoded.
        let token = try await world.authkit(["token", "--group", world.group])
        Self.expectClean(token, "token")
        #expect(token.status == 4, "token: \(token.status) \(token.stderr)")
        #expect(token.stdout.isEmpty)
        #expect(token.stderr.contains("does not use https"), "\(token.stderr)")
        #expect(token.stderr.contains("%1B") || token.stderr.contains("evil.example"), "\(token.stderr)")

        let search = try await world.authkit(["search", "ada", "--group", world.group])
        Self.expectClean(search, "search")
        #expect(search.status != 0)

        // The refresh token went nowhere: not to evil.example (refused) and not to the provider.
        #expect(try await world.provider.log().grantTypes["refresh_token", default: 0] == 0)
        let logout = try await world.authkit(["logout", "--group", world.group])
        Self.expectClean(logout, "logout")
        try await world.assertNoSecretsLeaked()
    }

    /// A stored record that says two things (two access tokens) is not read by any
    /// command, is reported as the account's problem, and is left in place (only logout removes it).
    @Test func aRecordWithADuplicateMemberIsReportedAndLeftInPlace() async throws {
        let world = try await CLIHarness.start()
        defer { world.stop() }
        try await world.signIn(user: "ada")
        let key = [
            "--group", world.group, "--issuer", world.provider.issuer.absoluteString, "--client-id", CLIHarness.clientID, "--account",
            "ada@example.test",
        ]
        let lookup = try world.keyring.probe(["--show-secret", "lookup"] + key)
        let answer = try #require(try JSONSerialization.jsonObject(with: Data(lookup.stdout.utf8)) as? [String: Any])
        var secret = try #require((answer["item"] as? [String: Any])?["secret"] as? String)
        secret.removeLast()
        secret += #","access_token":"planted-by-another-process"}"#
        try #require(try world.keyring.probe(["save"] + key, stdin: secret).status == 0)

        let status = try await world.authkit(["status", "--json", "--group", world.group])
        let report = try CLIOutput.jsonObject(status.stdout)
        let account = try #require((report["accounts"] as? [[String: Any]])?.first)
        let problem = try #require(account["problem"] as? String, "\(status.stdout)")
        #expect(problem.contains("duplicate member name ‘access_token’"), "JSON data keeps its text: \(problem)")
        #expect(!status.stdout.contains("planted-by-another-process"))
        let token = try await world.authkit(["token", "--group", world.group])
        #expect(token.status != 0 && token.stdout.isEmpty)
        #expect(token.stderr.contains("duplicate member name 'access_token'"), "\(token.stderr)")
        // Still there: nothing but logout deletes a sign-in.
        #expect(try world.keyring.probe(["lookup"] + key).status == 0)
        let logout = try await world.authkit(["logout", "--group", world.group])
        #expect(logout.status == 0, "\(logout.stderr)")
        #expect(try world.keyring.probe(["lookup"] + key).status == 1)
        try await world.assertNoSecretsLeaked()
    }

    /// A token read back from the store is checked as on receipt: an access token with a line
    /// break (written by another process of the user) never adds a `host=` line to git's
    /// answer and never goes out of `authkit token`; the record is reported and left in place.
    @Test func aStoredTokenWithALineBreakIsNeverHandedOut() async throws {
        let world = try await CLIHarness.start()
        defer { world.stop() }
        try await world.signIn(user: "ada")
        try Self.tamper(world, account: "ada@example.test") { record in
            record["access_token"] = "abc\nhost=evil.example"
            record["access_token_expires_at"] = Date().timeIntervalSince1970 + 3600
        }
        let token = try await world.authkit(["token", "--group", world.group])
        #expect(token.status != 0 && token.stdout.isEmpty, "token: \(token.status) \(token.stdout)")
        #expect(token.stderr.contains("access_token contains spaces, control or non-ASCII characters"), "\(token.stderr)")
        let git = try await world.authkit(
            ["credential", "git", "--group", world.group, "get"], stdin: "protocol=https\nhost=git.example.com\n\n")
        #expect(!git.stdout.contains("evil.example") && !git.stdout.contains("password="), "git: \(git.stdout)")
        let status = try await world.authkit(["status", "--json", "--group", world.group])
        #expect(status.stdout.contains("access_token contains spaces"), "\(status.stdout)")
        let logout = try await world.authkit(["logout", "--group", world.group])
        #expect(logout.status == 0, "\(logout.stderr)")
    }

    /// Graph's fields (names, mail, phones) carrying the corpus: the table and `--json` show
    /// them without one steering character; `--json` escapes them.
    @Test func graphFieldsNeverReachTheTerminalRaw() async throws {
        let directory = try TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let user: [String: Any] = [
            "businessPhones": ["+1 555 \(Self.corpus)"], "displayName": "Ada \(Self.corpus)", "givenName": "Ada", "jobTitle": "x",
            "mail": "ada\(Self.corpus)@contoso.test", "mobilePhone": Self.corpus, "officeLocation": "x", "preferredLanguage": "en",
            "surname": "Lovelace", "userPrincipalName": "ada@contoso.test", "id": "f14afa9c-f076-5c2a-906f-ba291334a389",
        ]
        let file = directory.appendingPathComponent("users.json")
        try JSONSerialization.data(withJSONObject: ["value": [user]]).write(to: file)
        let world = try await CLIHarness.start(graph: true, graphUsers: file)
        defer { world.stop() }
        try await world.signIn(user: "ada")
        let table = try await world.authkit(["search", "ada", "--group", world.group])
        #expect(table.status == 0, "\(table.stderr)")
        Self.expectClean(table, "search")
        let json = try await world.authkit(["search", "ada", "--json", "--group", world.group])
        #expect(json.status == 0, "\(json.stderr)")
        Self.expectClean(json, "search --json")
        #expect(json.stdout.contains(#"\u001b[2J"#) && json.stdout.contains(#"\u202e"#), "\(json.stdout)")
        try await world.assertNoSecretsLeaked()
    }

    /// Point 4: a provider issuing an access token with CR/LF (a header injection through
    /// `curl -H "Authorization: Bearer $(authkit token)"`): the answer is refused, nothing stored.
    @Test func aTokenThatWouldInjectAHeaderIsRefusedAndNothingStored() async throws {
        let world = try await CLIHarness.start()
        defer { world.stop() }
        try await world.provider.setFault(.patchJSON("token", ["access_token": "AT\r\nX-Injected: yes"]))
        let login = try await world.authkit(world.loginArguments(), environment: world.browserEnvironment(user: "ada"), timeout: 60)
        #expect(login.status == 4, "\(login.status): \(login.stderr)")
        #expect(login.stderr.contains("access_token contains spaces, control or non-ASCII characters"), "\(login.stderr)")
        Self.expectClean(login, "login")
        let status = try await world.authkit(["status", "--group", world.group])
        #expect(status.status == 1, "nothing may be stored: \(status.stdout)")
        try await world.assertNoSecretsLeaked()
    }

    /// Point 6: a config file others can write (or another user's) steers nothing.
    @Test func aConfigFileOthersCanWriteIsRefused() async throws {
        let world = try await CLIHarness.start()
        defer { world.stop() }
        let config = world.scratch.appendingPathComponent("config")
        try "[profile evil]\ngraph_url = https://evil.example/v1.0\n".write(to: config, atomically: false, encoding: .utf8)
        chmod(config.path, 0o666)
        let result = try await world.authkit(["status", "--profile", "evil"], environment: ["AUTHKIT_CONFIG": config.path])
        #expect(result.status == 2, "\(result.status): \(result.stderr)")
        #expect(
            result.stderr.contains("authkit does not use this file") && result.stderr.contains("chmod go-w \(config.path)"),
            "\(result.stderr)")
        chmod(config.path, 0o644)
        let fixed = try await world.authkit(["status", "--profile", "evil"], environment: ["AUTHKIT_CONFIG": config.path])
        #expect(fixed.status != 2, "\(fixed.stderr)")
    }

    @Test func valuesTheUserPassesAreNotEchoedRaw() async throws {
        let world = try await CLIHarness.start()
        defer { world.stop() }
        try await world.signIn(user: "ada")
        let runs: [(String, [String], [String: String])] = [
            ("--account", ["token", "--group", world.group, "--account", Self.corpus], [:]),
            ("--profile", ["status", "--profile", Self.corpus], [:]),
            ("--group", ["status", "--group", Self.corpus], [:]),
            (
                "AUTHKIT_ISSUER", ["login", "--client-id", "c", "--no-browser", "--timeout", "1"],
                ["AUTHKIT_ISSUER": "https://" + Self.corpus]
            ),
            ("AUTHKIT_PROFILE", ["status"], ["AUTHKIT_PROFILE": Self.corpus]),
            ("search text", ["search", Self.corpus, "--group", world.group], [:]),
        ]
        for (what, arguments, environment) in runs {
            let result = try await world.authkit(arguments, environment: environment, timeout: 20)
            Self.expectClean(result, what)
            #expect(result.status != 0 || what == "search text", "\(what) was accepted")
        }
        try await world.assertNoSecretsLeaked()
    }

    /// Any local user can reach the receiver's port while a sign-in waits: a request whose
    /// repeated parameter *name* is an escape sequence is ignored, and the note about it is clean.
    @Test func aNeighboursCallbackCannotWriteToTheTerminal() async throws {
        let world = try await CLIHarness.start()
        defer { world.stop() }
        let arguments = world.loginArguments(["--no-browser", "--timeout", "20"])
        let login = try world.start(arguments, environment: world.browserEnvironment(user: "ada"))
        let url = try #require(await login.waitForStderr { CLIOutput.authorizationURL(in: $0) }, "no URL shown: \(login.stderrSoFar)")
        let redirect = try #require(
            URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems?.first { $0.name == "redirect_uri" }?.value)
        let name = "%1B%5D52%3Bc%3BZXZpbA%3D%3D%07%9B2J%E2%80%AE"
        let forged = try #require(URL(string: redirect + "?\(name)=1&\(name)=2&state=x"))
        _ = try? await offThePool { try Data(contentsOf: forged) }
        // The real browser then completes the sign-in: the forged request ended nothing.
        let browser = try await offThePool { try ScriptedBrowser(user: "ada", for: world.provider).open(url) }
        #expect(browser.status == 0, "\(browser.stderr)")
        let result = try await world.finish(login, arguments)
        #expect(result.status == 0, "\(result.stderr)")
        Self.expectClean(result, "login with a neighbour's forged callback")
        try await world.assertNoSecretsLeaked()
    }
}
