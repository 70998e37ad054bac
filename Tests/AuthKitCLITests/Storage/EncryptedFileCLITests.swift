import Foundation
import SecretStore
import TestSupport
import Testing

/// The encrypted-file store through the real binary against the local OpenID provider: first
/// use, a simulated reboot (the kernel keyring's key removed, the agent restarted), locked as an
/// answer with the unlock hint, a wrong passphrase, unlock and refresh, a refresh race of 16
/// processes, logout of one group, and the leak scan.
@Suite struct EncryptedFileCLITests {
    static let passphrase = "a passphrase for the tests"

    /// The world's store, as the test process reads it (the same user, the same keyring).
    func store(_ world: CLIHarness) -> EncryptedFileStore {
        EncryptedFileStore(directory: (world.environment["XDG_DATA_HOME"] ?? "/nonexistent") + "/authkit", environment: [:])
    }

    /// Rewrites the stored record, as a refresh would find it (the store must be unlocked).
    func changeRecord(_ world: CLIHarness, group: String, _ change: (inout [String: Any]) -> Void) async throws {
        let store = store(world)
        let items = try await store.items(matching: ItemQuery(group: try SecretGroup(group), kind: "tokens"), loadSecrets: true)
        let item = try #require(items.first { $0.problem == nil })
        var record = try #require(try JSONSerialization.jsonObject(with: Data(item.secret ?? [])) as? [String: Any])
        change(&record)
        try await store.save(Array(try JSONSerialization.data(withJSONObject: record, options: [.sortedKeys])), for: item.key)
    }

    /// A session keyring that does not link the user keyring — systemd's `KeyringMode=private`
    /// (the default for system services), `keyctl session -`: unlock works there, and every other
    /// session (a login shell's) finds the store unlocked, as the unlock lives in the persistent
    /// keyring.
    @Test func unlockWorksInASessionKeyringOfItsOwn() async throws {
        let group = "com.example.encrypted-\(UInt32.random(in: 0...UInt32.max))"
        let world = try await CLIHarness.start(group: group)
        let store = store(world)
        defer {
            _ = try? store.lock()
            world.stop()
        }
        let login = try await world.authkit(
            world.loginArguments(["--storage", "encrypted-file", "--passphrase-fd", "0"]),
            environment: world.browserEnvironment(user: "ada"),
            stdin: Self.passphrase + "\n", timeout: 90)
        #expect(login.status == 0, "\(login.stderr)")
        #expect(try await world.authkit(["lock"]).status == 0)
        let keyctl = URL(fileURLWithPath: "/usr/bin/keyctl")
        let authkit = TestPaths.product("authkit").path
        let environment = world.environment
        let unlock = try await offThePool {
            try ProcessRunner.run(
                keyctl, ["session", "-", authkit, "unlock", "--passphrase-fd", "0"], environment: environment,
                stdin: Self.passphrase + "\n",
                timeout: 60)
        }
        #expect(unlock.status == 0, "\(unlock.stdout) \(unlock.stderr)")
        let inside = try await offThePool {
            try ProcessRunner.run(keyctl, ["session", "-", authkit, "token", "--group", group], environment: environment, timeout: 30)
        }
        #expect(inside.status == 0, "\(inside.stderr)")
        world.recordExternal("authkit", ["token", "--group", group], inside)
        let outside = try await world.authkit(["token", "--group", group])
        #expect(outside.status == 0 && outside.stdout == inside.stdout, "\(outside.stderr)")
        _ = try await world.authkit(["logout", "--group", group])
        try await world.assertNoSecretsLeaked()
    }

    /// A typo in the issuer: the provider does not answer, and nothing was created — no store,
    /// no passphrase asked.
    @Test func nothingIsCreatedBeforeTheProviderAnswers() async throws {
        let world = try await CLIHarness.start()
        defer { world.stop() }
        let login = try await world.authkit(
            [
                "login", "--issuer", world.provider.issuer.absoluteString + "/typo", "--client-id", CLIHarness.clientID, "--storage",
                "encrypted-file",
                "--passphrase-fd", "0", "--group", world.group,
            ],
            stdin: Self.passphrase + "\n", timeout: 60)
        #expect(login.status != 0 && !login.stderr.contains("choose a passphrase"), "\(login.stderr)")
        #expect(!FileManager.default.fileExists(atPath: store(world).identityPath), "no store was made")
    }

    @Test func aSignInSurvivesAReboot() async throws {
        let group = "com.example.encrypted-\(UInt32.random(in: 0...UInt32.max))"
        let world = try await CLIHarness.start(group: group)
        let store = store(world)
        defer {
            _ = try? store.lock()
            world.stop()
        }
        let storage = ["--storage", "encrypted-file"]

        // First use: a new identity from the passphrase on a descriptor, and where things are.
        let login = try await world.authkit(
            world.loginArguments(storage + ["--passphrase-fd", "0"]), environment: world.browserEnvironment(user: "ada"),
            stdin: Self.passphrase + "\n", timeout: 90)
        #expect(login.status == 0, "\(login.stderr)")
        #expect(login.stderr.contains(store.identityPath) && login.stderr.contains("Back up identity.age"), "\(login.stderr)")
        #expect(login.stderr.contains("age-encrypted"), "\(login.stderr)")
        #expect(!login.stderr.contains(Self.passphrase))
        let status = try await world.authkit(["status", "--group", group])
        #expect(status.status == 0 && status.stdout.contains("encrypted store: unlocked until reboot"), "\(status.stdout)\(status.stderr)")
        let first = try await world.authkit(["token", "--group", group])
        #expect(first.status == 0 && !first.stdout.isEmpty, "found without the flag: \(first.stderr)")
        let printed = try await world.authkit(["setup", "git", "--host", "https://git.example.com", "--print"] + storage)
        #expect(printed.stdout.contains("storage = encrypted-file"), "\(printed.stdout)")

        // A simulated reboot: the unlock's keyring emptied and gone (keyctl, as a reboot clears the
        // kernel's keyrings), the agent restarted. The files survive; every reader answers
        // "locked" with the hint.
        try await world.startAgent()
        let recipient = try #require(try store.recipientText())
        let found = try Keyctl.run(["search", "%persistent", "keyring", "authkit:age-unlocked:\(recipient)"])
        let id = found.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try Keyctl.run(["clear", id]).status == 0, "\(found.stderr)")
        #expect(try Keyctl.run(["invalidate", id]).status == 0)
        await world.stopAgent()
        try await world.startAgent()
        #expect(FileManager.default.fileExists(atPath: store.folder(for: try SecretGroup(group))))
        let locked = try await world.authkit(["token", "--group", group])
        #expect(locked.status == 3 && locked.stdout.isEmpty, "\(locked.stdout)\(locked.stderr)")
        #expect(locked.stderr.contains("is locked") && locked.stderr.contains("`authkit unlock`"), "\(locked.stderr)")
        // status shows the sign-ins as there and locked, and says how to open them: exit 0.
        let lockedStatus = try await world.authkit(["status", "--group", group])
        #expect(
            lockedStatus.status == 0 && lockedStatus.stdout.contains("locked: run `authkit unlock`"),
            "\(lockedStatus.stdout)\(lockedStatus.stderr)")
        let lockedJSON = try CLIOutput.jsonObject(try await world.authkit(["status", "--json", "--group", group]).stdout)
        #expect(lockedJSON["signed_in"] as? Bool == true && (lockedJSON["error"] as? String)?.contains("authkit unlock") == true)
        let plugin = try await world.authkit(
            ["credential", "git", "--group", group, "get"], stdin: "protocol=https\nhost=git.example.com\n\n")
        #expect(
            plugin.status != 0 && plugin.stderr.contains("`authkit unlock`") && !plugin.stdout.contains("password="),
            "\(plugin.status) \(plugin.stdout) \(plugin.stderr)")
        let exec = try await world.authkit(["exec", "--group", group, "--", "/bin/true"])
        #expect(exec.status == 3 && exec.stderr.contains("`authkit unlock`"), "\(exec.stderr)")

        // A wrong passphrase: its own exit code, nothing lost.
        let wrong = try await world.authkit(["unlock", "--passphrase-fd", "0"], stdin: "not it\n", timeout: 60)
        #expect(wrong.status == 9 && wrong.stderr.contains("does not open"), "\(wrong.stderr)")
        #expect(try await world.authkit(["token", "--group", group]).status == 3)

        // Unlocked again (for a while), the sign-in's refresh still works.
        let unlock = try await world.authkit(["unlock", "--passphrase-fd", "0", "--for", "8h"], stdin: Self.passphrase + "\n", timeout: 60)
        #expect(unlock.status == 0 && unlock.stdout.contains("Unlocked"), "\(unlock.stdout)\(unlock.stderr)")
        let until = try await world.authkit(["status", "--group", group])
        #expect(until.stdout.contains("encrypted store: unlocked until 20"), "\(until.stdout)")
        // The library's SharedSession(group:) finds it through the storage record, and reads it.
        let example = try await world.example()
        #expect(example.status == 0 && example.stdout.contains("Signed in as"), "\(example.stdout)\(example.stderr)")
        // A new passphrase (old and new on two lines of the descriptor) re-seals the identity only.
        let change = try await world.authkit(
            ["unlock", "--change-passphrase", "--passphrase-fd", "0"], stdin: Self.passphrase + "\nanother one\n", timeout: 60)
        #expect(change.status == 0, "\(change.stderr)")
        let again = try await world.authkit(["unlock", "--passphrase-fd", "0"], stdin: "another one\n", timeout: 60)
        #expect(again.status == 0, "\(again.stderr)")
        await world.stopAgent()

        // 16 processes refreshing one sign-in make one refresh and agree on the new token.
        try await changeRecord(world, group: group) { $0["access_token_expires_at"] = Date().timeIntervalSince1970 - 10 }
        try await world.provider.clearLog()
        let results = try await withThrowingTaskGroup(of: ProcessResult.self) { tasks in
            for _ in 0..<16 {
                tasks.addTask { try await world.authkit(["token", "--group", group], timeout: 90) }
            }
            return try await tasks.reduce(into: []) { $0.append($1) }
        }
        #expect(results.allSatisfy { $0.status == 0 }, "\(results.map(\.stderr))")
        #expect(Set(results.map(\.stdout)).count == 1, "every process printed the same new token")
        #expect(results.first?.stdout != first.stdout)
        #expect(try await world.provider.log().grantTypes["refresh_token", default: 0] == 1)

        // Lock: token says locked again; a sign-in still saves (only the recipient is needed).
        let lock = try await world.authkit(["lock"])
        #expect(lock.status == 0 && lock.stdout.contains("Locked"), "\(lock.stdout)\(lock.stderr)")
        #expect(try await world.authkit(["token", "--group", group]).status == 3)
        let other = group + ".other"
        let second = try await world.authkit(
            ["login", "--issuer", world.provider.issuer.absoluteString, "--client-id", CLIHarness.clientID, "--group", other] + storage,
            environment: world.browserEnvironment(user: "ada"), timeout: 90)
        #expect(second.status == 0, "a locked store takes a sign-in: \(second.stderr)")
        let relogin = try await world.authkit(
            world.loginArguments(storage), environment: world.browserEnvironment(user: "ada"), timeout: 90)
        #expect(relogin.status == 0, "a locked store takes a new sign-in of a signed-in group too: \(relogin.stderr)")

        // Logout removes only that group's files.
        // Logout reads the refresh token to revoke it: locked, it says so and removes nothing.
        let lockedLogout = try await world.authkit(["logout", "--group", group] + storage)
        #expect(lockedLogout.status == 3 && lockedLogout.stderr.contains("`authkit unlock`"), "\(lockedLogout.stderr)")
        _ = try await world.authkit(["unlock", "--passphrase-fd", "0"], stdin: "another one\n", timeout: 60)
        let logout = try await world.authkit(["logout", "--group", group] + storage)
        #expect(logout.status == 0, "\(logout.stderr)")
        #expect(try await world.authkit(["token", "--group", group] + storage).status == 1)
        #expect(try await world.authkit(["token", "--group", other]).status == 0, "the other group's sign-in stays")
        _ = try await world.authkit(["logout", "--group", other] + storage)
        try await world.assertNoSecretsLeaked()
    }

    /// First use on a terminal: the new passphrase is asked twice without echo (typed on a pty),
    /// login says where the files and the identity are and how to back them up, and the typed
    /// passphrase never shows.
    @Test func firstUseOnATerminalAsksForTheNewPassphraseTwice() async throws {
        let group = "com.example.encrypted-\(UInt32.random(in: 0...UInt32.max))"
        let world = try await CLIHarness.start(group: group)
        let store = store(world)
        defer {
            _ = try? store.lock()
            world.stop()
        }
        let driver = """
            import os, pty, sys
            passphrase = sys.argv[1].encode()
            prompts = (b"New passphrase for the encrypted token store:", b"The same passphrase again:")
            pid, fd = pty.fork()
            if pid == 0:
                os.execv(sys.argv[2], sys.argv[2:])
            seen, asked, out = b"", 0, b""
            while True:
                try:
                    data = os.read(fd, 1024)
                except OSError:
                    break
                if not data:
                    break
                seen += data
                out += data
                # The prompt is the whole last line: other lines say "passphrase:" too, and a
                # read can end right after them.
                if seen.rstrip().rsplit(b"\\n", 1)[-1].strip() in prompts:
                    os.write(fd, passphrase + b"\\n")
                    asked += 1
                    seen = b""
            _, status = os.waitpid(pid, 0)
            sys.stdout.buffer.write(b"asked %d\\n" % asked + out)
            sys.exit(os.waitstatus_to_exitcode(status))
            """
        let environment = world.environment.merging(world.browserEnvironment(user: "ada")) { $1 }
        let login = try await ProcessRunner.run(
            TestPaths.python,
            ["-c", driver, Self.passphrase, TestPaths.product("authkit").path] + world.loginArguments(["--storage", "encrypted-file"]),
            environment: environment, timeout: 120)
        #expect(login.status == 0, "\(login.stdout)\(login.stderr)")
        #expect(login.stdout.hasPrefix("asked 2\n"), "\(login.stdout)")
        #expect(login.stdout.contains("Back up identity.age") && login.stdout.contains(store.identityPath), "\(login.stdout)")
        #expect(!login.stdout.contains(Self.passphrase), "no echo")
        let token = try await world.authkit(["token", "--group", group])
        #expect(token.status == 0, "\(token.stderr)")
        _ = try await world.authkit(["logout", "--group", group])
    }
}
