import Foundation
import TestSupport
import Testing

/// `authkit search` against the Graph fixture server, which accepts only the access tokens
/// the test provider issued and is still honouring.
@Suite struct SearchCommandTests {
    static let select = "displayName,userPrincipalName,mail,businessPhones,mobilePhone"

    static func filter(_ literal: String) -> String {
        ["displayName", "givenName", "surname", "mail", "userPrincipalName"].map { "startswith(\($0),'\(literal)')" }.joined(
            separator: " or ")
    }

    /// Terminal columns (wide East Asian characters take two), to check the table's alignment.
    static func columns(_ text: Substring) -> Int {
        text.unicodeScalars.reduce(0) { width, scalar in
            switch scalar.value {
            case 0x1100...0x115F, 0x2E80...0x9FFF, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFF00...0xFF60: width + 2
            default: width + 1
            }
        }
    }

    @Test func printsAnAlignedTableAndSendsTheEscapedFilter() async throws {
        let world = try await CLIHarness.start(graph: true)
        defer { world.stop() }
        try await world.signIn()
        let graph = try #require(world.graph)

        let ada = try await world.authkit(["search", "ada", "--group", world.group, "--format", "table"])
        #expect(ada.status == 0, "\(ada.stderr)")
        let lines = CLIOutput.lines(ada.stdout)
        #expect(lines.first?.hasPrefix("NAME ") == true)
        #expect(lines.dropFirst().map { $0.prefix(while: { $0 != " " }) } == ["Ada", "Adam", "Adaeze"])
        #expect(ada.stdout.contains("+44 20 7946 0001, +44 7700 900001 (mobile)"))
        var requests = try await graph.requests()
        #expect(requests.count == 1)
        #expect(requests.first?.filter == Self.filter("ada"))
        #expect(requests.first?.select == Self.select)
        #expect(requests.first?.bearerPresent == true)

        // O'Brien: the quote doubled inside the OData literal, never closing it.
        try await graph.clearRequests()
        let obrien = try await world.authkit(["search", "O'Brien", "--group", world.group, "--format", "table"])
        #expect(obrien.status == 0, "\(obrien.stderr)")
        #expect(obrien.stdout.contains("Seán O'Brien"))
        #expect(obrien.stdout.contains("Patrick O'Brien-Murphy"))
        requests = try await graph.requests()
        #expect(requests.map(\.filter) == [Self.filter("O''Brien")])
        #expect(requests.map(\.status) == [200])

        // An injection attempt is just an odd name: no match, no 400 from Graph.
        try await graph.clearRequests()
        let injection = try await world.authkit(["search", "x') or startswith(mail,'", "--group", world.group, "--format", "table"])
        #expect(injection.status == 0, "\(injection.stderr)")
        #expect(injection.stdout.isEmpty)
        #expect(injection.stderr.contains("authkit: no users found"))
        #expect(try await graph.requests().map(\.status) == [200])

        // Columns line up in terminal columns, also with Korean and Japanese names (m…: Megan,
        // Miriam, minjun.kim@ (김민준), mohammed…).
        let mixed = try await world.authkit(["search", "m", "--group", world.group, "--format", "table"])
        #expect(mixed.status == 0, "\(mixed.stderr)")
        let table = CLIOutput.lines(mixed.stdout)
        #expect(mixed.stdout.contains("김민준"))
        let header = try #require(table.first)
        let usernameColumn = Self.columns(header[..<(header.range(of: "USERNAME")?.lowerBound ?? header.endIndex)])
        for row in table.dropFirst() {
            // The USERNAME cell is the first one containing '@'; find where it starts.
            let cells = row.components(separatedBy: "  ").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            let username = try #require(cells.first { $0.contains("@") })
            let start = try #require(row.range(of: username))
            #expect(Self.columns(row[..<start.lowerBound]) == usernameColumn, "misaligned: \(row)")
        }
        try await world.assertNoSecretsLeaked()
    }

    /// Piped, the default is TSV for scripts (no header, tab-separated, an empty
    /// field where Graph has no value); a table fits the terminal's width, cutting long cells
    /// with an ellipsis (ASCII "..." off a terminal), never wrapping; no dash for a missing value.
    @Test func tsvWhenPipedAndATableThatFitsTheWidth() async throws {
        let world = try await CLIHarness.start(graph: true)
        defer { world.stop() }
        try await world.signIn()
        let tsv = try await world.authkit(["search", "ada", "--group", world.group])
        #expect(tsv.status == 0, "\(tsv.stderr)")
        let rows = CLIOutput.lines(tsv.stdout).map { $0.split(separator: "\t", omittingEmptySubsequences: false).map(String.init) }
        #expect(rows.map { $0.first?.prefix(while: { $0 != " " }) } == ["Ada", "Adam", "Adaeze"])
        #expect(rows.count == 3 && rows.allSatisfy { $0.count == 4 }, "\(rows)")
        #expect(!tsv.stdout.contains("NAME"), "no header")
        #expect(!tsv.stdout.contains("–"))
        let json = try await world.authkit(["search", "ada", "--group", world.group, "--format", "json"])
        #expect(CLIOutput.lines(json.stdout).count == 3 && json.stdout.hasPrefix("{"))
        // Adrian King has neither mail nor phone: empty fields, not a dash.
        let adrian = try await world.authkit(["search", "Adrian", "--group", world.group])
        #expect(
            adrian.stdout == "Adrian King\tadrian.king@contoso.test\t\t\n"
                || adrian.stdout.hasPrefix("Adrian King\t") && adrian.stdout.hasSuffix("\t\t\n"),
            "\(adrian.stdout)")

        for width in [60, 40] {
            let table = try await world.authkit(
                ["search", "m", "--group", world.group, "--format", "table"], environment: ["COLUMNS": "\(width)"])
            #expect(table.status == 0, "\(table.stderr)")
            let lines = CLIOutput.lines(table.stdout)
            #expect(lines.count > 3)
            for line in lines {
                #expect(Self.columns(Substring(line)) <= width, "wider than \(width): \(line)")
            }
            #expect(table.stdout.contains("..."), "cut cells end in an ellipsis")
            #expect(!table.stdout.contains("…") && !table.stdout.contains("–"), "ASCII off a terminal")
        }
        let contradiction = try await world.authkit(["search", "ada", "--group", world.group, "--json", "--format", "tsv"])
        #expect(contradiction.status == 2 && contradiction.stderr.contains("contradicts --format tsv"))
        try await world.assertNoSecretsLeaked()
    }

    @Test func jsonLinesHaveEveryFieldEveryTime() async throws {
        let world = try await CLIHarness.start(graph: true)
        defer { world.stop() }
        try await world.signIn()
        let result = try await world.authkit(["search", "a", "--json", "--group", world.group])
        #expect(result.status == 0, "\(result.stderr)")
        let rows = try CLIOutput.lines(result.stdout).map { try PeerJSON(data: Data($0.utf8)) }
        #expect(rows.count >= 8)
        for row in rows {
            #expect(Set(row.object.keys) == ["displayName", "userPrincipalName", "mail", "businessPhones", "mobilePhone"])
            if case .array = row["businessPhones"] {} else { Issue.record("businessPhones is not an array: \(row)") }
        }
        let adrian = try #require(rows.first { $0["displayName"] == .string("Adrian King") })
        #expect(adrian["mail"] == .null, "present, and null, when the directory has no mail")
        try await world.assertNoSecretsLeaked()
    }

    @Test func pagesThroughNextLinkUpToTop() async throws {
        // 130 extra people whose names start with "Pager": more than one 100-user page.
        let fixtures = try TestPaths.makeTemporaryDirectory(prefix: "authkit-graph-users")
        defer { try? FileManager.default.removeItem(at: fixtures) }
        var base = try JSONSerialization.jsonObject(with: Data(contentsOf: TestPaths.fixture("graph/users.json"))) as? [String: Any] ?? [:]
        var users = base["value"] as? [[String: Any]] ?? []
        for index in 1...130 {
            let number = String(format: "%03d", index)
            users.append([
                "id": UUID().uuidString.lowercased(), "displayName": "Pager Person \(number)", "givenName": "Pager",
                "surname": "Person \(number)", "mail": "pager.\(number)@contoso.test", "userPrincipalName": "pager.\(number)@contoso.test",
                "businessPhones": [], "mobilePhone": NSNull(),
            ])
        }
        base["value"] = users
        let file = fixtures.appendingPathComponent("users.json")
        try JSONSerialization.data(withJSONObject: base).write(to: file)

        let world = try await CLIHarness.start(graph: true, graphUsers: file)
        defer { world.stop() }
        try await world.signIn()
        let graph = try #require(world.graph)

        let many = try await world.authkit(["search", "Pager", "--top", "120", "--json", "--group", world.group])
        #expect(many.status == 0, "\(many.stderr)")
        let names = try CLIOutput.lines(many.stdout).map { try PeerJSON(data: Data($0.utf8))["displayName"].string ?? "" }
        #expect(names.count == 120)
        #expect(Set(names).count == 120, "no user twice across pages")
        var requests = try await graph.requests()
        #expect(requests.count == 2, "page one, then @odata.nextLink")
        #expect(requests.map(\.skiptoken) == [false, true])
        #expect(requests.first?.top == "100")

        try await graph.clearRequests()
        let all = try await world.authkit(["search", "Pager", "--top", "500", "--json", "--group", world.group])
        #expect(CLIOutput.lines(all.stdout).count == 130, "stops when Graph has no next page")
        requests = try await graph.requests()
        #expect(requests.count == 2)

        try await graph.clearRequests()
        let few = try await world.authkit(["search", "Pager", "--top", "5", "--group", world.group, "--format", "table"])
        #expect(CLIOutput.lines(few.stdout).count == 6, "header and five rows")
        requests = try await graph.requests()
        #expect(requests.count == 1)
        #expect(requests.first?.top == "5")
        try await world.assertNoSecretsLeaked()
    }

    @Test func unauthorizedRefreshesOnceSilentlyAndRetries() async throws {
        let world = try await CLIHarness.start(graph: true)
        defer { world.stop() }
        try await world.signIn()
        let graph = try #require(world.graph)
        try await world.provider.clearLog()
        try await graph.failNext(status: 401)
        let result = try await world.authkit(["search", "grace", "--group", world.group])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.isEmpty, "silent")
        #expect(result.stdout.contains("Grace Hopper"))
        #expect(try await graph.requests().map(\.status) == [401, 200])
        #expect(try await world.provider.log().count(grantType: "refresh_token") == 1)

        // A second 401 in a row: the sign-in is not accepted; login needed.
        try await graph.clearRequests()
        try await graph.failNext(status: 401, count: 2)
        let twice = try await world.authkit(["search", "grace", "--group", world.group])
        #expect(twice.status == 1, "\(twice.stderr)")
        #expect(twice.stderr.contains("authkit login --group \(world.group)"))
        #expect(try await graph.requests().map(\.status) == [401, 401], "exactly one retry")
        try await world.assertNoSecretsLeaked()
    }

    @Test func forbiddenNamesThePermissionAndTheLoginThatGrantsIt() async throws {
        let world = try await CLIHarness.start(graph: true)
        defer { world.stop() }
        try await world.signIn()
        try await world.graph?.failNext(status: 403)
        let result = try await world.authkit(["search", "ada", "--group", world.group])
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.contains("User.ReadBasic.All"))
        #expect(result.stderr.contains("hint: run `authkit login --group \(world.group) --scope User.ReadBasic.All` to grant it\n"))
        try await world.assertNoSecretsLeaked()
    }

    @Test func throttlingWaitsForRetryAfterThenSucceeds() async throws {
        let world = try await CLIHarness.start(graph: true)
        defer { world.stop() }
        try await world.signIn()
        let graph = try #require(world.graph)
        try await graph.failNext(status: 429, retryAfter: 2)
        let result = try await world.authkit(["search", "ada", "--group", world.group])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("Ada Lovelace"))
        let requests = try await graph.requests()
        #expect(requests.map(\.status) == [429, 200])
        if requests.count == 2 {
            #expect(requests[1].at - requests[0].at >= 1.9, "it waited as long as Retry-After said")
        }

        // 503 likewise.
        try await graph.clearRequests()
        try await graph.failNext(status: 503, retryAfter: 1)
        let unavailable = try await world.authkit(["search", "ada", "--group", world.group])
        #expect(unavailable.status == 0, "\(unavailable.stderr)")
        #expect(try await graph.requests().map(\.status) == [503, 200])

        // A wait beyond the bound is not sat out: exit 4 at once, saying when to retry.
        try await graph.clearRequests()
        try await graph.failNext(status: 429, retryAfter: 600)
        let tooLong = try await world.authkit(["search", "ada", "--group", world.group], timeout: 20)
        #expect(tooLong.status == 4, "\(tooLong.stderr)")
        #expect(tooLong.stderr.contains("600"), "\(tooLong.stderr)")
        #expect(try await graph.requests().count == 1)
        try await world.assertNoSecretsLeaked()
    }

    @Test func aSignInThatNeedsALoginExitsOneNotFour() async throws {
        let world = try await CLIHarness.start(graph: true)
        defer { world.stop() }
        try await world.provider.configure(["access_token_ttl": 30])
        try await world.signIn()
        try await world.provider.setFault(.error("invalid_grant", description: "revoked", grantType: "refresh_token"))
        let result = try await world.authkit(["search", "ada", "--group", world.group])
        #expect(result.status == 1, "the refresh token is dead: a login is needed, not a provider failure: \(result.stderr)")
        #expect(result.stderr.contains("must sign in again"))
        #expect(
            result.stderr.contains(
                "hint: run `authkit login --group \(world.group) --issuer \(world.provider.issuer.absoluteString) --client-id \(CLIHarness.clientID)` to sign in\n"
            ))
        #expect(try await world.graph?.requests().isEmpty == true, "no request went to Graph without a token")
        try await world.assertNoSecretsLeaked()
    }

    @Test func needsASignInAndAGraphURL() async throws {
        let world = try await CLIHarness.start(graph: true)
        defer { world.stop() }
        let nobody = try await world.authkit(["search", "ada", "--group", world.group])
        #expect(nobody.status == 1)
        #expect(nobody.stderr.contains("hint: run `authkit login --group \(world.group)` to sign in\n"))

        // Signed in without a Graph URL (no profile with graph_url): a usage error that says what to set.
        let login = try await world.authkit(
            world.loginArguments(), environment: ScriptedBrowser(user: "ada", for: world.provider).environment, timeout: 60)
        #expect(login.status == 0, "\(login.stderr)")
        let noGraph = try await world.authkit(["search", "ada", "--group", world.group])
        #expect(noGraph.status == 2, "\(noGraph.stderr)")
        #expect(noGraph.stderr.contains("AUTHKIT_GRAPH_URL"))
        try await world.assertNoSecretsLeaked()
    }
}
