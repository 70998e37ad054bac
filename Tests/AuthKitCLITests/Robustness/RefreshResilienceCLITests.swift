import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// What a person or a script sees when a refresh answer is
/// refused, and when `authkit token` is killed while the provider answers.
@Suite struct RefreshResilienceCLITests {
    /// Marks the stored access token expired, so the next `authkit token` refreshes.
    static func expire(_ world: CLIHarness) throws {
        try TerminalSafetyTests.tamper(world, account: "ada@example.test") {
            $0["access_token_expires_at"] = Date().timeIntervalSince1970 - 10
        }
    }

    /// The record the keyring holds for `account`, read by the store probe.
    static func storedRecord(_ world: CLIHarness, account: String) throws -> [String: Any] {
        var record: [String: Any] = [:]
        try TerminalSafetyTests.read(world, account: account) { record = $0 }
        return record
    }

    @Test func aRefusedIDTokenSaysSoOnceAndTheNextCallHeals() async throws {
        let world = try await CLIHarness.start()
        defer { world.stop() }
        try await world.signIn(user: "ada")
        try Self.expire(world)
        try await world.provider.setFault(.idTokenUnknownKey)
        let refused = try await world.authkit(["token", "--group", world.group])
        #expect(refused.status == 4, "\(refused.status): \(refused.stderr)")
        #expect(refused.stdout.isEmpty)
        let lines = refused.stderr.split(separator: "\n")
        #expect(lines.count <= 2, "\(refused.stderr)")
        #expect(refused.stderr.contains("id_token was rejected"))

        let status = try await world.authkit(["status", "--json", "--group", world.group])
        let account = try #require((try CLIOutput.jsonObject(status.stdout)["accounts"] as? [[String: Any]])?.first)
        #expect((account["refresh_problem"] as? String)?.contains("id_token") == true, "\(status.stdout)")
        #expect(account["usable"] as? Bool == true)
        let text = try await world.authkit(["status", "--group", world.group])
        #expect(text.stdout.contains("last refresh:   not used"), "\(text.stdout)")

        let healed = try await world.authkit(["token", "--group", world.group])
        #expect(healed.status == 0, "\(healed.stderr)")
        #expect(try await world.provider.log().grantTypes["refresh_token", default: 0] == 2)
        let after = try await world.authkit(["status", "--json", "--group", world.group])
        let cleared = try #require((try CLIOutput.jsonObject(after.stdout)["accounts"] as? [[String: Any]])?.first)
        #expect(cleared["refresh_problem"] is NSNull)
        try await world.assertNoSecretsLeaked()
    }

    /// The keyring locks while the provider rotates the refresh token: the save is refused (a
    /// refresh never prompts), the new refresh token waits in the kernel keyring, and the next
    /// command once the keyring is unlocked puts it back — no new refresh, no new login, the
    /// provider's live refresh token the stored one.
    @Test func aRotatedRefreshTokenTheStoreRefusesWaitsAndIsSavedNextTime() async throws {
        let world = try await CLIHarness.start()
        defer { world.stop() }
        try await world.signIn(user: "ada")
        try Self.expire(world)
        try await world.provider.setFault(.hold(grantType: "refresh_token"))
        let arguments = ["token", "--group", world.group]
        let refreshing = try world.start(arguments)
        var holding = false
        for _ in 0..<400 where !holding {
            holding = try await world.provider.isHolding()
            if !holding { try await Task.sleep(for: .milliseconds(50)) }
        }
        try #require(holding, "the provider never received the refresh")
        try world.keyring.lockCollection(label: "Login")
        try await world.provider.release()
        let refused = try await world.finish(refreshing, arguments)
        #expect(refused.status == 3, "\(refused.status): \(refused.stderr)")
        #expect(refused.stdout.isEmpty)
        #expect(refused.stderr.contains("waits in the kernel keyring"), "\(refused.stderr)")

        try world.keyring.unlockCollection(label: "Login", password: world.keyring.password)
        let healed = try await world.authkit(arguments)
        #expect(healed.status == 0, "\(healed.stderr)")
        #expect(try await world.provider.log().grantTypes["refresh_token", default: 0] == 1, "no second refresh was needed")
        let again = try await world.authkit(arguments)
        #expect(again.status == 0 && again.stdout == healed.stdout, "the saved record's token is served")
        let live = try await world.provider.issued()["items"].array.filter { $0["kind"] == "refresh_token" && $0["active"] == true }
        let stored = try Self.storedRecord(world, account: "ada@example.test")
        #expect(live.count == 1 && live.first?["value"].string == stored["refresh_token"] as? String, "the store holds the live one")
        try await world.assertNoSecretsLeaked()
    }

    /// `authkit token` killed (SIGKILL) while the provider holds its refresh answer: the lock
    /// is the kernel's to release, so the next process does not wait; with rotation the lost
    /// answer took the only live refresh token, and the next process says exactly that.
    @Test(arguments: [true, false])
    func aProcessKilledMidRefreshLosesAtMostThatAnswer(rotation: Bool) async throws {
        var options = OIDCTestProvider.Options()
        options.refreshRotation = rotation
        let world = try await CLIHarness.start(provider: options)
        defer { world.stop() }
        try await world.signIn(user: "ada")
        try Self.expire(world)
        try await world.provider.setFault(.hold(grantType: "refresh_token"))
        let arguments = ["token", "--group", world.group]
        let victim = try world.start(arguments)
        var holding = false
        for _ in 0..<200 where !holding {
            holding = try await world.provider.isHolding()
            if !holding { try await Task.sleep(for: .milliseconds(50)) }
        }
        try #require(holding, "the provider never received the refresh")
        victim.send(signal: SIGKILL)
        let killed = try await world.finish(victim, arguments)
        #expect(killed.status != 0 && killed.stdout.isEmpty)
        try await world.provider.release()

        let started = Date()
        let next = try await world.authkit(arguments)
        #expect(Date().timeIntervalSince(started) < 40, "the next process waited for a dead process's lock")
        if rotation {
            #expect(next.status == 1, "\(next.status): \(next.stderr)")
            #expect(next.stderr.contains("must sign in again"), "\(next.stderr)")
            #expect(next.stderr.contains("no longer accepts the refresh token"), "\(next.stderr)")
            let status = try await world.authkit(["status", "--group", world.group])
            #expect(status.stdout.contains("ada@example.test"), "the sign-in must stay listed until logout")
        } else {
            #expect(next.status == 0, "\(next.stderr)")
        }
        try await world.assertNoSecretsLeaked()
    }
}
