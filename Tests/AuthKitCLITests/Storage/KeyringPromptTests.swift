import Foundation
import TestSupport
import Testing

/// Keyring dialogs only where a person asked: `login` keeps the sign-in in the default
/// collection without asking for a collection; `login --own-keyring` asks once, said first;
/// refreshes through `token`, git's plug-in and the agent ask nothing; a locked group keyring
/// fails a plug-in with the locked hint, never an Unlock, while `status` may still unlock.
/// Counted as method calls on the private bus (Tests/Peers/bus_monitor.py), from real programs.
@Suite("Keyring prompts", .serialized)
struct KeyringPromptTests {
    static let dialogs = ["CreateCollection", "Unlock", "Prompt"]

    static func counts(_ monitor: BusMonitor) throws -> [String: Int] {
        let calls = try monitor.calls()
        return Dictionary(uniqueKeysWithValues: dialogs.map { name in (name, calls.filter { $0.member == name }.count) })
    }

    static func storage(_ world: CLIHarness) async throws -> (collection: String?, own: Bool?) {
        let status = try await world.authkit(["status", "--json", "--group", world.group])
        let report = try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any]
        let storage = ((report?["accounts"] as? [[String: Any]])?.first?["storage"] as? [String: Any]) ?? [:]
        return (storage["collection"] as? String, storage["group_collection"] as? Bool)
    }

    @Test func loginKeepsTheSignInInTheDefaultCollectionWithoutAskingForOne() async throws {
        let world = try await CLIHarness.start()
        defer { world.stop() }
        let monitor = try await offThePool { try world.keyring.monitor() }
        let login = try await world.signIn()
        #expect(!login.stderr.contains("new keyring"), "\(login.stderr)")
        #expect(try await offThePool { try Self.counts(monitor) } == ["CreateCollection": 0, "Unlock": 0, "Prompt": 0])
        let storage = try await Self.storage(world)
        #expect(storage.collection == "Login")
        #expect(storage.own == false)
        #expect(try await offThePool { try world.keyring.collectionCount(label: world.group) } == 0)
    }

    @Test func ownKeyringIsAskedOnceSaidFirstAndADismissalFallsBackAndIsNotAskedAgain() async throws {
        let world = try await CLIHarness.start()
        defer { world.stop() }
        let monitor = try await offThePool { try world.keyring.monitor() }
        // No prompter on the private bus: the provider's dialog cannot be shown — a dismissal.
        let login = try await world.signIn(["--own-keyring"])
        let announced = try #require(
            login.stderr.range(of: "your desktop asks for a password for a new keyring", options: .caseInsensitive),
            "\(login.stderr)")
        let warned = try #require(login.stderr.range(of: "was not created"), "\(login.stderr)")
        #expect(announced.lowerBound < warned.lowerBound)
        #expect(login.stderr.contains("‘Login’") || login.stderr.contains("'Login'"), "says where the sign-in went: \(login.stderr)")
        #expect(try await offThePool { try Self.counts(monitor)["CreateCollection"] } == 1)
        #expect(try await Self.storage(world).collection == "Login")
        // A refresh afterwards does not ask again.
        let token = try await world.authkit(["token", "--group", world.group, "--min-ttl", "86400", "--allow-shorter"])
        #expect(token.status == 0, "\(token.stderr)")
        #expect(try await offThePool { try Self.counts(monitor)["CreateCollection"] } == 1)
        // Another storage than the Secret Service: a usage error, before anything.
        let kernel = try await world.authkit(world.loginArguments(["--own-keyring", "--storage", "kernel-keyring"]))
        #expect(kernel.status == 2, "\(kernel.stderr)")
    }

    @Test func refreshesThroughTokenGitAndTheAgentAskNothing() async throws {
        let world = try await CLIHarness.start()
        defer { world.stop() }
        try await world.signIn()
        let monitor = try await offThePool { try world.keyring.monitor() }
        let issuedBefore = try await world.provider.issuedSecrets().count
        let token = try await world.authkit(["token", "--group", world.group, "--min-ttl", "86400", "--allow-shorter"])
        #expect(token.status == 0, "\(token.stderr)")
        // git: the token was rejected (erase), so the next get refreshes.
        let request = "protocol=https\nhost=git.example.com\n"
        let erase = try await world.authkit(
            ["credential", "git", "--group", world.group, "erase"],
            stdin: request + "username=authkit\npassword=\(token.stdout.trimmingCharacters(in: .newlines))\n\n")
        #expect(erase.status == 0, "\(erase.stderr)")
        let get = try await world.authkit(["credential", "git", "--group", world.group, "get"], stdin: request + "\n")
        #expect(get.status == 0 && get.stdout.contains("password="), "\(get.stderr)")
        // The agent refreshes for a client that needs a longer-lived token.
        try await world.startAgent()
        let viaAgent = try await world.authkit(["token", "--group", world.group, "--min-ttl", "86400", "--allow-shorter"])
        #expect(viaAgent.status == 0, "\(viaAgent.stderr)")
        let issuedAfter = try await world.provider.issuedSecrets().count
        #expect(issuedAfter > issuedBefore, "the provider issued new tokens: the refreshes happened")
        #expect(try await offThePool { try Self.counts(monitor) } == ["CreateCollection": 0, "Unlock": 0, "Prompt": 0])
        try await world.assertNoSecretsLeaked()
    }

    @Test func aLockedGroupKeyringFailsAPlugInWithTheHintAndNoUnlockWhileStatusMayUnlock() async throws {
        let world = try await CLIHarness.start()
        defer { world.stop() }
        try await offThePool { try world.keyring.createCollection(label: world.group) }
        try await world.signIn()
        #expect(try await Self.storage(world) == (world.group, true))
        try await offThePool { try world.keyring.lockCollection(label: world.group) }
        let monitor = try await offThePool { try world.keyring.monitor() }
        let get = try await world.authkit(
            ["credential", "git", "--group", world.group, "get"], stdin: "protocol=https\nhost=git.example.com\n\n")
        #expect(get.status != 0)
        #expect(get.stdout.isEmpty)
        #expect(get.stderr.contains("is locked"), "\(get.stderr)")
        #expect(get.stderr.contains("unlock it"), "the locked hint: \(get.stderr)")
        let exec = try await world.authkit(["exec", "--group", world.group, "--", "/bin/true"])
        #expect(exec.status == 3, "\(exec.stderr)")
        #expect(try await offThePool { try Self.counts(monitor) } == ["CreateCollection": 0, "Unlock": 0, "Prompt": 0])
        // A person at the terminal: status asks the provider to unlock (headless here, so the
        // dialog cannot show and the command still says locked).
        let status = try await world.authkit(["status", "--group", world.group])
        #expect(status.status == 3, "\(status.stderr)")
        #expect(try await offThePool { try Self.counts(monitor)["Unlock"] } == 1)
    }

    /// With gnome-keyring's real prompter (gcr-prompter on Xvfb, answered by xdotool):
    /// `login --own-keyring` asks once and the sign-in goes there; a plug-in facing the locked
    /// keyring shows nothing and names what unlocks it; `status` brings the unlock dialog, answered
    /// with its pre-checked "Automatically unlock this keyring whenever I'm logged in" — after which
    /// gnome-keyring lists an item in the login keyring it cannot show ("Unlock password for: …") —
    /// and refreshes, plug-ins and new sign-ins in the login keyring carry on, losing nothing.
    @Test func theRealPrompterAndTheAutoUnlockItemLoseNothing() async throws {
        let world = try await CLIHarness.start(prompter: true)
        defer { world.stop() }
        let own = "own-keyring-password"
        let arguments = world.loginArguments(["--own-keyring"])
        let login = try world.start(arguments, environment: world.browserEnvironment(user: "ada"))
        try await offThePool { try world.keyring.answerPrompt(password: own) }
        let signedIn = try await world.finish(login, arguments, timeout: 90)
        #expect(signedIn.status == 0, "\(signedIn.stderr)")
        #expect(try await Self.storage(world) == (world.group, true))

        try await offThePool { try world.keyring.lockCollection(label: world.group) }
        let monitor = try await offThePool { try world.keyring.monitor() }
        let get = try await world.authkit(
            ["credential", "git", "--group", world.group, "get"], stdin: "protocol=https\nhost=git.example.com\n\n")
        #expect(get.status != 0 && get.stdout.isEmpty)
        #expect(get.stderr.contains("is locked") && get.stderr.contains("authkit status"), "what unlocks it: \(get.stderr)")
        #expect(!get.stderr.contains("--unlock --replace"), "that unlocks only the login keyring: \(get.stderr)")
        #expect(try await offThePool { try Self.counts(monitor) } == ["CreateCollection": 0, "Unlock": 0, "Prompt": 0])

        let status = try world.start(["status", "--group", world.group])
        try await offThePool { try world.keyring.answerPrompt(password: own) }
        let unlocked = try await world.finish(status, ["status", "--group", world.group])
        #expect(unlocked.status == 0, "\(unlocked.stderr)")
        let broken = try await offThePool { try world.keyring.peer(["unreadable-items"]) }
        #expect(broken.contains("/collection/login/"), "gnome-keyring's auto-unlock item: \(broken)")

        // Refreshes in the group's keyring, a plug-in, and a new sign-in in the login keyring.
        for _ in 0..<2 {
            try RefreshResilienceCLITests.expire(world)
            let token = try await world.authkit(["token", "--group", world.group])
            #expect(token.status == 0, "\(token.stderr)")
        }
        let plugin = try await world.authkit(
            ["credential", "git", "--group", world.group, "get"], stdin: "protocol=https\nhost=git.example.com\n\n")
        #expect(plugin.status == 0 && plugin.stdout.contains("password="), "\(plugin.stderr)")
        let other = world.loginArguments().map { $0 == world.group ? world.group + ".other" : $0 }
        let second = try await world.authkit(other, environment: world.browserEnvironment(user: "grace"), timeout: 90)
        #expect(second.status == 0, "\(second.stderr)")
        let secondToken = try await world.authkit(["token", "--group", world.group + ".other", "--min-ttl", "86400", "--allow-shorter"])
        #expect(secondToken.status == 0, "\(secondToken.stderr)")
        #expect(try await world.provider.log().grantTypes["refresh_token", default: 0] >= 3)
        try await world.assertNoSecretsLeaked()
    }
}
