import Foundation
import TestSupport
import Testing

/// `authkit logout`: revokes, removes, is idempotent, and every tool of the group sees it.
@Suite struct LogoutCommandTests {
    @Test func revokesRemovesAndOtherToolsSeeItAtOnce() async throws {
        let world = try await CLIHarness.start()
        defer { world.stop() }
        try await world.signIn()
        let before = try await world.example()
        #expect(before.status == 0, "the second program shares the sign-in: \(before.stdout)")
        #expect(before.stdout.contains("Signed in as Ada Lovelace (ada@example.test)"))

        let logout = try await world.authkit(["logout", "--group", world.group])
        #expect(logout.status == 0, "\(logout.stderr)")
        let lines = logout.stderr.split(separator: "\n").map(String.init)
        #expect(lines.first == "Signed out ada@example.test from \(world.group) (refresh token revoked).")
        // The hint is the whole command that restores this sign-in (no config file here: the
        // issuer and client come from the removed record), and it works as printed.
        let hinted = try #require(lines.last?.split(separator: ": ", maxSplits: 1).last.map(String.init), "\(logout.stderr)")
        #expect(
            hinted
                == "authkit login --group \(world.group) --issuer \(world.provider.issuer.absoluteString) --client-id \(CLIHarness.clientID)"
        )
        let log = try await world.provider.log()
        #expect(log.count(endpoint: "revocation") == 1)
        let issued = try await world.provider.issued()["items"].array
        #expect(
            issued.filter { $0["kind"] == .string("refresh_token") }.allSatisfy { $0["active"] == .bool(false) },
            "the provider no longer honours it")

        // Gone for everyone, at once: no cache anywhere.
        let after = try await world.example()
        #expect(after.status == 1, "\(after.stdout)")
        #expect(after.stdout.contains("Nobody is signed in in \(world.group)"))
        #expect(try await world.authkit(["status", "--group", world.group]).status == 1)
        #expect(try await world.authkit(["token", "--group", world.group]).status == 1)
        let items = try await offThePool { try world.keyring.secretTool(["search", "--all", "group", world.group]) }
        #expect(!items.stdout.contains("kind = tokens") && !items.stderr.contains("kind = tokens"), "no item left behind")

        // Idempotent.
        let again = try await world.authkit(["logout", "--group", world.group])
        #expect(again.status == 0)
        #expect(again.stderr == "Nothing to do: nobody is signed in in \(world.group).\n")
        #expect(try await world.provider.log().count(endpoint: "revocation") == 1)

        // The hinted command, as printed, signs the same sign-in in again.
        let restored = try await world.authkit(
            Array(hinted.split(separator: " ").dropFirst().map(String.init)), environment: world.browserEnvironment(), timeout: 60)
        #expect(restored.status == 0, "the hinted command: \(restored.stderr)")
        #expect(try await world.authkit(["token", "--group", world.group]).status == 0)
        try await world.assertNoSecretsLeaked()
    }

    /// After a sign-out, a later command's "nobody is signed in" hint still names the whole
    /// login (the issuer and client id of the group's last sign-in, remembered without a
    /// secret), and that command works as printed.
    @Test func laterCommandsStillHintTheWholeLoginAfterASignOut() async throws {
        let world = try await CLIHarness.start()
        defer { world.stop() }
        try await world.signIn()
        #expect(try await world.authkit(["logout", "--group", world.group]).status == 0)
        let expected =
            "authkit login --group \(world.group) --issuer \(world.provider.issuer.absoluteString) --client-id \(CLIHarness.clientID)"
        for command in [["token"], ["status"], ["exec", "--", "true"]] {
            let later = try await world.authkit([command[0], "--group", world.group] + command.dropFirst())
            #expect(later.status == 1 && later.stderr.contains("run `\(expected)` to sign in"), "\(command): \(later.stderr)")
        }
        let restored = try await world.authkit(
            Array(expected.split(separator: " ").dropFirst().map(String.init)), environment: world.browserEnvironment(), timeout: 60)
        #expect(restored.status == 0, "the hinted command: \(restored.stderr)")
        try await world.assertNoSecretsLeaked()
    }

    @Test func severalAccountsNeedAccountOrAll() async throws {
        let world = try await CLIHarness.start()
        defer { world.stop() }
        try await world.signIn(user: "ada")
        try await world.signIn(user: "grace")

        let ambiguous = try await world.authkit(["logout", "--group", world.group])
        #expect(ambiguous.status == 2, "\(ambiguous.stderr)")
        #expect(ambiguous.stderr.contains("holds 2 accounts"))
        #expect(ambiguous.stderr.contains("--account") && ambiguous.stderr.contains("--all"))

        let one = try await world.authkit(["logout", "--group", world.group, "--account", "grace@example.test"])
        #expect(one.status == 0, "\(one.stderr)")
        #expect(one.stderr.contains("Signed out grace@example.test"))
        let status = try await world.authkit(["status", "--group", world.group])
        #expect(status.status == 0)
        #expect(status.stdout.contains("Ada Lovelace") && !status.stdout.contains("Grace Hopper"))

        try await world.signIn(user: "alan")
        let all = try await world.authkit(["logout", "--group", world.group, "--all"])
        #expect(all.status == 0, "\(all.stderr)")
        #expect(CLIOutput.lines(all.stderr).count == 3, "two accounts and how to sign in again")
        #expect(all.stderr.contains("ada@example.test") && all.stderr.contains("alan@example.test"))
        #expect(try await world.authkit(["status", "--group", world.group]).status == 1)
        #expect(try await world.provider.log().count(endpoint: "revocation") == 3)

        let unknown = try await world.authkit(["logout", "--group", world.group, "--account", "nobody@example.test"])
        #expect(unknown.status == 0)
        #expect(unknown.stderr.contains("Nothing to do: nobody@example.test is not signed in"))
        try await world.assertNoSecretsLeaked()
    }

    @Test(arguments: CLIHarness.Storage.allCases)
    func failedRevocationStillSignsOut(storage: CLIHarness.Storage) async throws {
        let world = try await CLIHarness.start(storage: storage)
        defer { world.stop() }
        try await world.signIn()
        try await world.provider.setFault(.http500("revocation"))
        let logout = try await world.authkit(["logout", "--group", world.group])
        #expect(logout.status == 0, "\(logout.stderr)")
        #expect(logout.stderr.contains("revocation failed"), "it says so: \(logout.stderr)")
        #expect(try await world.authkit(["status", "--group", world.group]).status == 1, "removed from this machine all the same")
        try await world.assertNoSecretsLeaked()
    }

    @Test(arguments: CLIHarness.Storage.allCases)
    func otherGroupsAreLeftAlone(storage: CLIHarness.Storage) async throws {
        let world = try await CLIHarness.start(storage: storage)
        defer { world.stop() }
        try await world.signIn()
        let other = try await world.authkit(
            [
                "login", "--issuer", world.provider.issuer.absoluteString, "--client-id", CLIHarness.clientID, "--group",
                "org.example.other",
            ],
            environment: world.browserEnvironment(user: "grace"), timeout: 60)
        #expect(other.status == 0, "\(other.stderr)")
        let logout = try await world.authkit(["logout", "--group", "org.example.other", "--all"])
        #expect(logout.status == 0)
        #expect(try await world.authkit(["status", "--group", world.group]).status == 0, "another group's sign-out leaves this one")
        #expect(try await world.authkit(["status", "--group", "org.example.other"]).status == 1)
        try await world.assertNoSecretsLeaked()
    }
}
