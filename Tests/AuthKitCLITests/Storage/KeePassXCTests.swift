import Foundation
import TestSupport
import Testing

/// The whole life of a sign-in in KeePassXC 2.7.4, a second Secret Service nobody here wrote
/// (Debian's, headless, its database's group exposed as the default collection): login, tokens,
/// forced refreshes with a rotating provider, the git plug-in, the agent and logout. Each
/// refresh updates the item in place: KeePassXC answers a `CreateItem` that replaces another
/// program's item with a dialog nobody can see, which cost the rotated refresh token before.
@Suite struct KeePassXCTests {
    @Test func aSignInLivesAndRefreshesInKeePassXCAndLogsOut() async throws {
        let world = try await CLIHarness.start(keyring: .keepassxc)
        defer { world.stop() }
        try await world.signIn(user: "ada")
        let status = try await world.authkit(["status", "--json", "--group", world.group])
        let account = try #require((try CLIOutput.jsonObject(status.stdout)["accounts"] as? [[String: Any]])?.first, "\(status.stdout)")
        #expect((account["storage"] as? [String: Any])?["collection"] as? String == "authkit", "KeePassXC's exposed group")

        for round in 1...3 {
            try RefreshResilienceCLITests.expire(world)
            let started = Date()
            let token = try await world.authkit(["token", "--group", world.group])
            #expect(token.status == 0, "refresh \(round): \(token.stderr)")
            // A dialog nobody answers holds the D-Bus call until its 25 s timeout; a busy machine
            // takes several seconds without one (7 s seen with both cores busy).
            #expect(Date().timeIntervalSince(started) < 20, "refresh \(round) waited for a dialog")
        }
        #expect(try await world.provider.log().grantTypes["refresh_token", default: 0] == 3)
        let live = try await world.provider.issued()["items"].array.filter { $0["kind"] == "refresh_token" && $0["active"] == true }
        let stored = try RefreshResilienceCLITests.storedRecord(world, account: "ada@example.test")
        #expect(live.count == 1 && live.first?["value"].string == stored["refresh_token"] as? String, "the live refresh token is stored")
        let items = try await offThePool { try world.keyring.peer(["read", "group=\(world.group)"]) }
        #expect((try JSONSerialization.jsonObject(with: Data(items.utf8)) as? [Any])?.count == 1, "one item, no copies: \(items.count)")

        let get = try await world.authkit(
            ["credential", "git", "--group", world.group, "get"], stdin: "protocol=https\nhost=git.example.com\n\n")
        #expect(get.status == 0 && get.stdout.contains("password="), "\(get.stderr)")
        try await world.startAgent()
        let viaAgent = try await world.authkit(["token", "--group", world.group, "--min-ttl", "86400", "--allow-shorter"])
        #expect(viaAgent.status == 0, "\(viaAgent.stderr)")
        #expect(try await world.provider.log().grantTypes["refresh_token", default: 0] == 4, "the agent refreshed through the store")

        let logout = try await world.authkit(["logout", "--group", world.group])
        #expect(logout.status == 0, "\(logout.stderr)")
        let after = try await offThePool { try world.keyring.peer(["read", "group=\(world.group)"]) }
        #expect(after == "[]", "\(after)")
        let gone = try await world.authkit(["token", "--group", world.group])
        #expect(gone.status == 1, "\(gone.stderr)")
        try await world.assertNoSecretsLeaked()
    }
}
