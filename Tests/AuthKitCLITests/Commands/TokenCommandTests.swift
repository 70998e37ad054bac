import Foundation
import TestSupport
import Testing

/// `authkit token` as scripts use it: `$(authkit token)` is exactly the access token.
@Suite struct TokenCommandTests {
    // With and without the agent: the same answers, either way.
    @Test(arguments: CLIHarness.Storage.allCases, [false, true])
    func printsTheTokenAndNothingElseWithoutNetwork(storage: CLIHarness.Storage, agent: Bool) async throws {
        let world = try await CLIHarness.start(storage: storage, agent: agent)
        defer { world.stop() }
        try await world.signIn()
        let before = try await world.provider.log().total
        let first = try await world.authkit(["token", "--group", world.group])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stderr.isEmpty)
        let lines = first.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count == 2 && lines[1].isEmpty, "one line, then nothing")
        #expect(!lines[0].isEmpty && !lines[0].contains(" "))
        let second = try await world.authkit(["token", "--group", world.group])
        #expect(second.stdout == first.stdout, "a valid stored token is printed as is")
        // The hot path: no discovery, no JWKS, no refresh — not one request.
        #expect(try await world.provider.log().total == before)
        // assertNoSecretsLeaked also checks that what `token` printed is an issued access token.
        try await world.assertNoSecretsLeaked()
    }

    @Test(arguments: CLIHarness.Storage.allCases, [false, true])
    func refreshesUnderTheLockWhenTheTokenIsTooShortLived(storage: CLIHarness.Storage, agent: Bool) async throws {
        let world = try await CLIHarness.start(storage: storage, agent: agent)
        defer { world.stop() }
        try await world.provider.configure(["access_token_ttl": 30])
        try await world.signIn()
        let stored = try await world.authkit(["token", "--group", world.group, "--min-ttl", "0"])
        try await world.provider.configure(["access_token_ttl": 3600])
        try await world.provider.clearLog()
        // Several tools at once (two of them the library example) on a token that lives too
        // short for them: one refresh, the same new token for all.
        try await world.provider.setFault(.delay("token", milliseconds: 500))
        let results = try await withThrowingTaskGroup(of: (String, ProcessResult).self) { group in
            for index in 0..<5 {
                group.addTask {
                    index < 3
                        ? ("token", try await world.authkit(["token", "--group", world.group, "--min-ttl", "120"]))
                        : ("example", try await world.example())
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        let log = try await world.provider.log()
        #expect(log.count(grantType: "refresh_token") == 1, "one refresh for all of them")
        #expect(log.count(endpoint: "discovery") == 0, "a refresh needs no discovery: the record has the endpoints")
        let printed = Set(results.filter { $0.0 == "token" }.map(\.1.stdout))
        #expect(printed.count == 1)
        #expect(printed.first != stored.stdout, "a new token")
        for (program, result) in results {
            #expect(result.status == 0, "\(program): \(result.stdout)\(result.stderr)")
        }
        #expect(results.filter { $0.0 == "example" }.allSatisfy { $0.1.stdout.contains("Signed in as Ada Lovelace") })
        // The refreshed token is kept: the next call needs no network.
        try await world.provider.clearLog()
        let again = try await world.authkit(["token", "--group", world.group, "--min-ttl", "120"])
        #expect(printed.first == again.stdout)
        #expect(try await world.provider.log().total == 0)
        try await world.assertNoSecretsLeaked()
    }

    @Test func debugLogShowsTheRefreshAndNoSecret() async throws {
        let world = try await CLIHarness.start()
        defer { world.stop() }
        try await world.signIn()
        let debug = ["AUTHKIT_LOG": "debug"]
        let stored = try await world.authkit(["token", "--group", world.group], environment: debug)
        #expect(stored.status == 0, "\(stored.stderr)")
        #expect(stored.stderr.contains("access token from the store"), "\(stored.stderr)")
        let refreshed = try await world.authkit(
            ["token", "--group", world.group, "--min-ttl", "86400", "--allow-shorter"], environment: debug)
        #expect(refreshed.status == 0, "\(refreshed.stderr)")
        for line in ["access token needs a refresh", "holding the group's lock", "refreshing", "refreshed and stored"] {
            #expect(refreshed.stderr.contains(line), "missing '\(line)' in \(refreshed.stderr)")
        }
        // Without the variable, nothing but the token.
        let quiet = try await world.authkit(["token", "--group", world.group])
        #expect(quiet.stderr.isEmpty)
        // The debug lines went to stderr; every captured output is scanned for issued secrets.
        try await world.assertNoSecretsLeaked()
    }

    @Test(arguments: CLIHarness.Storage.allCases)
    func fewerScopesThanTheSignInsGetANarrowerTokenItsOwnScopesItsToken(storage: CLIHarness.Storage) async throws {
        let world = try await CLIHarness.start(storage: storage)
        defer { world.stop() }
        try await world.signIn()
        let plain = try await world.authkit(["token", "--group", world.group])
        let status = try await world.authkit(["status", "--json", "--group", world.group])
        let granted = try #require((try CLIOutput.jsonObject(status.stdout)["accounts"] as? [[String: Any]])?.first?["scopes"] as? [String])
        try await world.provider.clearLog()
        // Exactly the sign-in's scopes: its own token, no request.
        let same = try await world.authkit(["token", "--group", world.group] + granted.reversed().flatMap { ["--scope", $0] })
        #expect(same.status == 0 && same.stdout == plain.stdout, "\(same.stderr)")
        #expect(try await world.provider.log().total == 0)
        // Fewer: a narrower token, asked for once and then shared from the store.
        let fewer = try await world.authkit(["token", "--group", world.group, "--scope", "profile", "--scope", "openid"])
        #expect(fewer.status == 0 && fewer.stdout != plain.stdout, "\(fewer.stderr)")
        let again = try await world.authkit(["token", "--group", world.group, "--scope", "openid", "--scope", "profile"])
        #expect(again.stdout == fewer.stdout)
        #expect(try await world.provider.log().count(grantType: "refresh_token") == 1)
        try await world.provider.clearLog()

        // A scope never granted is asked for with the refresh token; this provider refuses
        // (RFC 6749 §6: no scope beyond the original grant), and authkit says so.
        let other = try await world.authkit(["token", "--group", world.group, "--scope", "email"])
        #expect(other.status == 4, "\(other.stderr)")
        #expect(other.stdout.isEmpty)
        #expect(other.stderr.contains("invalid_scope"), "\(other.stderr)")
        #expect(try await world.provider.log().count(grantType: "refresh_token") == 1)
        // The main sign-in is untouched.
        #expect(try await world.authkit(["token", "--group", world.group]).status == 0)
        try await world.assertNoSecretsLeaked()
    }

    @Test(arguments: CLIHarness.Storage.allCases)
    func notSignedInExitsOneWithAOneLineHint(storage: CLIHarness.Storage) async throws {
        let world = try await CLIHarness.start(storage: storage)
        defer { world.stop() }
        let result = try await world.authkit(["token", "--group", world.group])
        #expect(result.status == 1)
        #expect(result.stdout.isEmpty, "$(authkit token) must be empty, not an error text")
        #expect(
            result.stderr
                == "authkit: nobody is signed in in the group \(world.group); run `authkit login --group \(world.group)` to sign in\n")
    }

    @Test(arguments: CLIHarness.Storage.allCases)
    func rejectedRefreshTokenExitsOneAndKeepsTheSignIn(storage: CLIHarness.Storage) async throws {
        let world = try await CLIHarness.start(storage: storage)
        defer { world.stop() }
        try await world.provider.configure(["access_token_ttl": 30])
        try await world.signIn()
        try await world.provider.setFault(
            .error("invalid_grant", description: "refresh token revoked by an administrator", grantType: "refresh_token"))
        let result = try await world.authkit(["token", "--group", world.group, "--min-ttl", "120"])
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stdout.isEmpty)
        #expect(CLIOutput.lines(result.stderr).count == 1, "one line: \(result.stderr)")
        #expect(result.stderr.contains("must sign in again"))
        // The whole command: the issuer and client id of the group's last sign-in.
        #expect(
            result.stderr.contains(
                "run `authkit login --group \(world.group) --issuer \(world.provider.issuer.absoluteString) --client-id \(CLIHarness.clientID)`"
            ))
        // Not deleted: status still lists the account, as needing a login once the token expires.
        let status = try await world.authkit(["status", "--group", world.group])
        #expect(status.stdout.contains("Ada Lovelace"))
        try await world.assertNoSecretsLeaked()
    }

    @Test(arguments: CLIHarness.Storage.allCases)
    func providerDownWhileRefreshingExitsFour(storage: CLIHarness.Storage) async throws {
        let world = try await CLIHarness.start(storage: storage)
        defer { world.stop() }
        try await world.provider.configure(["access_token_ttl": 30])
        try await world.signIn()
        try await world.provider.setFault(.http500("token", count: 5))
        let result = try await world.authkit(["token", "--group", world.group, "--min-ttl", "120"])
        #expect(result.status == 4, "\(result.stderr)")
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.hasPrefix("authkit: "))
        try await world.assertNoSecretsLeaked()
    }
}

/// An honest --min-ttl. A provider whose tokens live an hour cannot meet
/// `--min-ttl 7200`: exit 8 and one line naming both lifetimes, unless --allow-shorter.
@Suite struct HonestMinTTLTests {
    @Test func aTokenShorterThanAskedIsExitEightUnlessAllowed() async throws {
        let world = try await CLIHarness.start()
        defer { world.stop() }
        try await world.signIn()
        let refused = try await world.authkit(["token", "--group", world.group, "--min-ttl", "7200"])
        #expect(refused.status == 8, "\(refused.status): \(refused.stderr)")
        #expect(refused.stdout.isEmpty)
        #expect(refused.stderr.contains("less than --min-ttl 7200 s") && refused.stderr.contains("--allow-shorter"), "\(refused.stderr)")
        let allowed = try await world.authkit(["token", "--group", world.group, "--min-ttl", "7200", "--allow-shorter"])
        #expect(allowed.status == 0 && !allowed.stdout.isEmpty, "\(allowed.stderr)")
        #expect(try await world.authkit(["token", "--group", world.group]).status == 0)
        try await world.assertNoSecretsLeaked()
    }

    /// A command that names no group, after sign-ins made for named ones: it says which, rather
    /// than "no D-Bus" or a bare "nobody is signed in".
    @Test func noGroupNamedSaysWhichGroupsAreSignedIn() async throws {
        let world = try await CLIHarness.start()
        defer { world.stop() }
        try await world.signIn()
        for environment in [[:], ["DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent"]] {
            let bare = try await world.authkit(["token"], environment: environment)
            #expect(bare.status == 1 && bare.stdout.isEmpty, "\(bare.status) \(bare.stderr)")
            #expect(
                bare.stderr.contains("sign-ins here were made for \(world.group)") && bare.stderr.contains("--group \(world.group)"),
                "\(bare.stderr)")
        }
    }
}
