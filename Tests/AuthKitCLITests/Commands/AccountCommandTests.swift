import Foundation
import TestSupport
import Testing

/// Two accounts in one group, and the one every tool uses: the most recent sign-in, the
/// current account (`authkit account use`), or AUTHKIT_ACCOUNT — the same with the agent.
@Suite struct AccountCommandTests {
    @Test(arguments: [false, true])
    func aCurrentAccountForEveryToolAndOnePerShell(agent: Bool) async throws {
        let world = try await CLIHarness.start(agent: agent)
        defer { world.stop() }
        try await world.signIn(user: "ada")
        try await world.signIn(user: "grace")
        let token = ["token", "--group", world.group]
        func tokenOf(_ account: String) async throws -> String {
            try await world.authkit(token + ["--account", account]).stdout
        }
        let ada = try await tokenOf("ada@example.test"), grace = try await tokenOf("grace@example.test")
        #expect(!ada.isEmpty && !grace.isEmpty && ada != grace)

        let listed = try await world.authkit(["account", "--group", world.group])
        #expect(
            listed.status == 0 && listed.stdout.contains("* grace@example.test (Grace Hopper): used (the most recent sign-in)"),
            "\(listed.stdout)")
        #expect(try await world.authkit(token).stdout == grace, "the most recent sign-in without a choice")

        let use = try await world.authkit(["account", "use", "ada@example.test", "--group", world.group])
        #expect(use.status == 0, "\(use.stderr)")
        #expect(try await world.authkit(token).stdout == ada, "every tool now gets the current account, at once")
        let status = try await world.authkit(["status", "--group", world.group])
        #expect(status.stdout.contains("current:        ada@example.test (current (authkit account use)"), "\(status.stdout)")
        #expect(
            try await world.authkit(token, environment: ["AUTHKIT_ACCOUNT": "grace@example.test"]).stdout == grace,
            "AUTHKIT_ACCOUNT wins for its shell")
        #expect(try await world.authkit(token + ["--account", "grace@example.test"]).stdout == grace, "--account wins over both")

        let unknown = try await world.authkit(["account", "use", "nobody@example.test", "--group", world.group])
        #expect(unknown.status == 1 && unknown.stderr.contains("nobody@example.test"), "\(unknown.stderr)")
        #expect(try await world.authkit(["account", "use", "--group", world.group]).status == 2, "a name or --clear")

        #expect(try await world.authkit(["account", "use", "--clear", "--group", world.group]).status == 0)
        #expect(try await world.authkit(token).stdout == grace, "cleared: the most recent sign-in again")

        // The chosen account signed out: its mark goes with it.
        #expect(try await world.authkit(["account", "use", "ada@example.test", "--group", world.group]).status == 0)
        #expect(try await world.authkit(["logout", "--group", world.group, "--account", "ada@example.test"]).status == 0)
        #expect(try await world.authkit(token).stdout == grace)
        try await world.assertNoSecretsLeaked()
    }
}
