import Foundation
import TestSupport
import Testing

/// A new user's first hour, scripted — no config, a wrong client
/// id, the right one, a locked keyring — with the exact lines and exit codes a person sees,
/// and how long each failure takes (bounds that tell "fails fast" from "waits for the
/// timeout", not measurements).
@Suite struct NewUserWalkthroughTests {
    @Test func aNewUsersFirstHour() async throws {
        let world = try await CLIHarness.start()
        defer { world.stop() }
        let issuer = world.provider.issuer.absoluteString
        let browser = world.browserEnvironment(user: "ada")

        // 1. No config at all: login says what it needs, exit 2, nothing attempted.
        let bare = try await world.authkit(["login", "--group", world.group], environment: browser)
        #expect(bare.status == 2)
        #expect(
            bare.stderr
                == "authkit: login: 'issuer': no issuer: pass --issuer, set AUTHKIT_ISSUER or choose a profile (--profile microsoft: Microsoft Entra ID and personal accounts)\n",
            "\(bare.stderr)")
        #expect(bare.stdout.isEmpty)

        // 2. Nobody signed in yet: status says so, exit 1.
        let nobody = try await world.authkit(["status", "--group", world.group])
        #expect(nobody.status == 1, "\(nobody.stderr)")
        #expect(nobody.stdout == "Nobody is signed in in the group \(world.group).\n", "\(nobody.stdout)")

        // 3. A wrong client id: exit 7 in seconds, before any URL is shown; one error line,
        //    one hint at most.
        var started = Date()
        let wrong = try await world.authkit(
            ["login", "--issuer", issuer, "--client-id", "my-cli-typo", "--group", world.group], environment: browser)
        let wrongSeconds = Date().timeIntervalSince(started)
        #expect(wrong.status == 7, "\(wrong.status): \(wrong.stderr)")
        #expect(wrongSeconds < 10, "the provider said invalid_client: no waiting (\(wrongSeconds) s)")
        let wrongLines = wrong.stderr.split(separator: "\n").filter { $0.hasPrefix("authkit:") || $0.hasPrefix("hint:") }
        #expect(
            wrongLines.first?.hasPrefix("authkit: the provider does not accept the client id 'my-cli-typo' (invalid_client") == true,
            "\(wrong.stderr)")
        #expect(
            wrongLines.count == 2
                && wrongLines.last
                    == "hint: check --client-id and, for a confidential client, its secret: the provider's app registration must list this client",
            "\(wrong.stderr)")
        #expect(!wrong.stderr.contains("/authorize"), "no URL was shown")

        // 4. The right one: signed in, told who and where.
        let login = try await world.authkit(world.loginArguments(), environment: browser, timeout: 60)
        #expect(login.status == 0, "\(login.stderr)")
        #expect(login.stderr.contains("Signed in as Ada Lovelace (ada@example.test)\n"), "\(login.stderr)")
        #expect(login.stderr.contains("  stored:  Secret Service"), "\(login.stderr)")
        #expect(
            !login.stderr.contains("default collection") && !login.stderr.contains("could not be created"),
            "no storage jargon: \(login.stderr)")
        let token = try await world.authkit(["token", "--group", world.group])
        #expect(token.status == 0 && token.stdout.split(separator: ".").count == 3 || token.stdout.count > 16, "\(token.stderr)")
        #expect(token.stderr.isEmpty)

        // 5. The keyring locked (a new session, a screen lock): token and login exit 3 with
        //    the same words, and login fails before any URL is shown.
        try await offThePool { try world.keyring.lockCollection(label: "Login") }
        let locked = try await world.authkit(["token", "--group", world.group])
        #expect(locked.status == 3, "\(locked.status): \(locked.stderr)")
        #expect(locked.stdout.isEmpty)
        let lockedLines = locked.stderr.split(separator: "\n")
        #expect(
            lockedLines.count <= 2 && lockedLines.first?.hasPrefix("authkit: the keyring collection 'Login' is locked") == true,
            "\(locked.stderr)")
        #expect(lockedLines.dropFirst().allSatisfy { $0.hasPrefix("hint: ") })
        started = Date()
        let relogin = try await world.authkit(world.loginArguments(), environment: browser, timeout: 60)
        #expect(relogin.status == 3, "\(relogin.status): \(relogin.stderr)")
        #expect(Date().timeIntervalSince(started) < 10, "before the browser, not after")
        #expect(!relogin.stderr.contains("/authorize"), "no URL was shown: \(relogin.stderr)")
        #expect(relogin.stderr.contains("'Login' is locked"), "the same message as token: \(relogin.stderr)")
        #expect(try await world.provider.log().count(grantType: "authorization_code") == 1, "only the first sign-in reached the provider")
        try await world.assertNoSecretsLeaked()
    }
}

/// `scripts/try --check`: the try-it shell's set-up (private keyring, local provider and Graph,
/// a config file) makes the three commands it prints work as typed, with no flags.
@Suite struct TryScriptTests {
    @Test func theThreeFirstCommandsWorkAsPrinted() async throws {
        let script = TestPaths.packageRoot.appendingPathComponent("scripts/try")
        let bin = TestPaths.product("authkit").deletingLastPathComponent().path
        // A calling shell's AUTHKIT_* must not leak in (another test of this process may setenv
        // one meanwhile); the script clears them itself too.
        let environment = ProcessInfo.processInfo.environment.merging(["TRY_BIN": bin, "AUTHKIT_CLIENT_SECRET": "from-the-shell"]) { $1 }
        let result = try await ProcessRunner.run(script, ["--check"], environment: environment, timeout: 120)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("Signed in as Ada Lovelace"), "\(result.stderr)")
        #expect(
            result.stdout.contains("Group authkit") && result.stdout.contains("Ada Lovelace\tada.lovelace@contoso.test"), "\(result.stdout)"
        )
        #expect(result.stderr.contains("try: the three commands work"))
    }
}
