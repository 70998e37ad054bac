import Foundation
import TestSupport
import Testing

/// `authkit login` as a person runs it, against our strict provider and a real gnome-keyring:
/// through `$BROWSER`, with only the URL printed, with the final address pasted back, and
/// with a device code.
@Suite struct LoginCommandTests {
    @Test func signsInThroughTheBrowserWithNoConfigurationFile() async throws {
        let world = try await CLIHarness.start()
        defer { world.stop() }
        let login = try await world.signIn(user: "ada")
        #expect(login.stdout.isEmpty, "without --json, login prints to standard error only")
        let text = login.stderr
        #expect(text.contains("Provider: \(world.provider.issuer.absoluteString)"))
        #expect(text.contains("Opened your browser. If nothing appears, open this URL yourself:"))
        #expect(text.contains("Waiting for the sign-in in the browser ("), "it says what it waits for")
        #expect(text.contains(" left)..."), "and how long it still waits")
        #expect(text.contains("Signed in as Ada Lovelace (ada@example.test)"))
        #expect(text.contains("  issuer:  \(world.provider.issuer.absoluteString)\n"))
        #expect(text.contains("  scopes:  openid profile offline_access\n"))
        #expect(text.contains("  stored:  "))
        #expect(!text.contains("\u{1B}"), "no terminal control sequences when standard error is not a terminal")

        // $BROWSER was given a one-time loopback link (shown on the terminal too), never the
        // authorization URL: a command line is every local user's to read, and its state would
        // let one answer the sign-in first. The link led on to a PKCE (S256) request with state
        // and nonce.
        let opened = CLIOutput.lines(try String(contentsOf: world.browserLog, encoding: .utf8))
        #expect(opened.count == 2, "\(opened)")
        let start = try #require(CLIOutput.authorizationURL(in: text))
        #expect(opened.first == start.absoluteString)
        #expect(start.absoluteString.hasPrefix("http://127.0.0.1:") && start.path.hasPrefix("/authkit-start/") && start.query == nil)
        let url = try #require(opened.last.flatMap { URL(string: $0) })
        let query = Dictionary(
            (URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems ?? []).map { ($0.name, $0.value ?? "") }
        ) { a, _ in a }
        #expect(query["code_challenge_method"] == "S256")
        #expect(query["state"]?.isEmpty == false)
        #expect(query["nonce"]?.isEmpty == false)
        #expect(query["redirect_uri"]?.hasPrefix("http://127.0.0.1:") == true)

        let log = try await world.provider.log()
        #expect(log.count(grantType: "authorization_code") == 1)
        let status = try await world.authkit(["status", "--group", world.group])
        #expect(status.status == 0, "\(status.stderr)")
        #expect(status.stdout.contains("Signed in as Ada Lovelace (ada@example.test)"))
        try await world.assertNoSecretsLeaked()
    }

    @Test func jsonReportsTheSignedInAccount() async throws {
        let world = try await CLIHarness.start()
        defer { world.stop() }
        let login = try await world.signIn(user: "grace", ["--json"])
        let report = try CLIOutput.jsonObject(login.stdout)
        #expect(report["account"] as? String == "grace@example.test")
        #expect(report["name"] as? String == "Grace Hopper")
        #expect(report["issuer"] as? String == world.provider.issuer.absoluteString)
        #expect(report["client_id"] as? String == CLIHarness.clientID)
        #expect(report["refresh_token"] as? Bool == true)
        #expect(report["usable"] as? Bool == true)
        #expect((report["storage"] as? [String: Any])?["kind"] as? String == "secret-service")
        #expect(login.stderr.contains("Signed in as Grace Hopper (grace@example.test)"))
        try await world.assertNoSecretsLeaked()
    }

    @Test func noBrowserOnlyPrintsTheURL() async throws {
        let world = try await CLIHarness.start()
        defer { world.stop() }
        let arguments = world.loginArguments(["--no-browser"])
        // $BROWSER is set (and logs every URL it is given): --no-browser must not use it.
        let login = try world.start(arguments, environment: world.browserEnvironment(user: "ada"))
        let url = try #require(await login.waitForStderr { CLIOutput.authorizationURL(in: $0) }, "no URL shown: \(login.stderrSoFar)")
        #expect(login.stderrSoFar.contains("Open this URL in a browser to sign in:"))
        // A person opens it elsewhere on this machine.
        let browser = try await offThePool { try ScriptedBrowser(user: "grace", for: world.provider).open(url) }
        #expect(browser.status == 0, "\(browser.stderr)")
        let result = try await world.finish(login, arguments)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("Signed in as Grace Hopper (grace@example.test)"))
        #expect(!FileManager.default.fileExists(atPath: world.browserLog.path), "authkit started $BROWSER despite --no-browser")
        try await world.assertNoSecretsLeaked()
    }

    @Test func pasteAcceptsTheAddressTheBrowserEndedOn() async throws {
        let world = try await CLIHarness.start()
        defer { world.stop() }
        let arguments = world.loginArguments(["--paste"])
        let login = try world.start(arguments, environment: world.browserEnvironment())
        let url = try #require(await login.waitForStderr { CLIOutput.authorizationURL(in: $0) }, "no URL shown: \(login.stderrSoFar)")
        #expect(
            await login.waitForStderr { $0.contains("paste it here") ? true : nil } == true, "no paste instructions: \(login.stderrSoFar)")
        // The browser on "another machine" signs in and ends on an address that does not load.
        let redirect = try await offThePool { try ScriptedBrowser(user: "alan", for: world.provider).finalRedirect(for: url) }
        var components = try #require(URLComponents(url: redirect, resolvingAgainstBaseURL: false))
        components.queryItems = components.queryItems?.map { $0.name == "state" ? URLQueryItem(name: "state", value: "forged") : $0 }
        let forged = try #require(components.url)

        // Noise first: ignored, and the wait goes on. The forged one carries the real code.
        login.send("this is not an address\n")
        login.send(forged.absoluteString + "\n")
        #expect(
            await login.waitForStderr { $0.components(separatedBy: "Ignored: ").count >= 3 ? true : nil } == true,
            "both bad pastes should be reported as ignored: \(login.stderrSoFar)")
        login.send(redirect.absoluteString + "\n")
        let result = try await world.finish(login, arguments)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("Signed in as Alan Turing (alan@example.test)"))
        #expect(!FileManager.default.fileExists(atPath: world.browserLog.path), "authkit started $BROWSER in paste mode")
        // The pasted address is this test's own input, never echoed back: the leak scan covers
        // authkit's output, in which the code must not appear.
        try await world.assertNoSecretsLeaked()
    }

    @Test func deviceCodeSignInWaitsForApproval() async throws {
        var options = OIDCTestProvider.Options()
        options.deviceInterval = 1
        let world = try await CLIHarness.start(provider: options)
        defer { world.stop() }
        let arguments = world.loginArguments(["--device-code"])
        let login = try world.start(arguments, environment: world.browserEnvironment())
        let device = try #require(await login.waitForStderr { CLIOutput.deviceCode(in: $0) }, "no device code shown: \(login.stderrSoFar)")
        #expect(await login.waitForStderr { $0.contains("Waiting for the code to be approved (") ? true : nil } == true)
        let approval = try await offThePool {
            try ScriptedBrowser(user: "grace", for: world.provider).approveDevice(verificationURI: device.uri, userCode: device.code)
        }
        #expect(approval.status == 0, "\(approval.stderr)")
        let result = try await world.finish(login, arguments)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("Signed in as Grace Hopper (grace@example.test)"))
        let log = try await world.provider.log()
        #expect(log.count(endpoint: "device_authorization") == 1)
        #expect(log.count(grantType: "urn:ietf:params:oauth:grant-type:device_code") >= 1)
        #expect(!FileManager.default.fileExists(atPath: world.browserLog.path), "authkit started $BROWSER for a device-code sign-in")
        try await world.assertNoSecretsLeaked()
    }

    @Test func deniedConsentLeavesNobodySignedIn() async throws {
        let world = try await CLIHarness.start()
        defer { world.stop() }
        let login = try await world.authkit(world.loginArguments(), environment: world.browserEnvironment(deny: true), timeout: 60)
        #expect(login.status == 1, "a refused consent means: not signed in (exit 1): \(login.stderr)")
        #expect(login.stderr.contains("access_denied"))
        let status = try await world.authkit(["status", "--group", world.group])
        #expect(status.status == 1)
        try await world.assertNoSecretsLeaked()
    }

    /// An issuer that differs from the provider's own only by a trailing slash is a setting to
    /// fix (exit 7, "the provider rejected the configuration"), not an outage (exit 4) a script
    /// would wait out; nothing is shown to open and nothing stored.
    @Test func anIssuerTheProviderDoesNotNameIsAConfigurationError() async throws {
        let world = try await CLIHarness.start()
        defer { world.stop() }
        let issuer = world.provider.issuer.absoluteString
        let slashed = issuer.hasSuffix("/") ? String(issuer.dropLast()) : issuer + "/"
        let login = try await world.authkit(
            ["login", "--issuer", slashed, "--client-id", CLIHarness.clientID, "--group", world.group],
            environment: world.browserEnvironment(), timeout: 60)
        #expect(login.status == 7, "\(login.status): \(login.stderr)")
        #expect(login.stderr.contains("names the issuer") && login.stderr.contains("trailing slash"), "\(login.stderr)")
        #expect(!login.stderr.contains("http://127.0.0.1:") || !login.stderr.contains("authorize?"), "no sign-in URL")
        #expect(try await world.authkit(["status", "--group", world.group]).status == 1)
    }

    @Test func givesUpAfterTheTimeout() async throws {
        let world = try await CLIHarness.start()
        defer { world.stop() }
        let login = try await world.authkit(world.loginArguments(["--no-browser", "--timeout", "10"]), timeout: 40)
        #expect(login.status == 1, "\(login.stderr)")
        #expect(login.stderr.contains("Waiting for the sign-in in the browser (0:10 left)..."))
        #expect(login.stderr.contains("10 s"), "the message says how long it waited: \(login.stderr)")
        let status = try await world.authkit(["status", "--group", world.group])
        #expect(status.status == 1)
    }

    @Test func tenantIssuerTemplateFromAConfigProfile() async throws {
        let tenant = "9188040d-6c67-4c5b-b112-36a304b66dad"
        var options = OIDCTestProvider.Options()
        options.issuerPath = "/{tenantid}/v2.0"
        options.tenantID = tenant
        let world = try await CLIHarness.start(provider: options)
        defer { world.stop() }
        let template = try #require(world.provider.process.ready["issuer_template"].string)
        try FileManager.default.createDirectory(at: world.configDirectory, withIntermediateDirectories: true)
        try """
        # like the built-in microsoft profile, against the test provider
        [profile contoso]
        issuer = \(template)
        tenant = organizations
        client_id = \(CLIHarness.clientID)
        group = \(world.group)
        """.write(to: world.configDirectory.appendingPathComponent("config"), atomically: false, encoding: .utf8)
        let login = try await world.authkit(["login", "--profile", "contoso"], environment: world.browserEnvironment(), timeout: 60)
        #expect(login.status == 0, "\(login.stderr)")
        #expect(login.stderr.contains("  tenant:  \(tenant)\n"))
        #expect(login.stderr.contains("  issuer:  \(world.provider.baseURL.absoluteString)/\(tenant)/v2.0\n"))
        let status = try await world.authkit(["status", "--profile", "contoso", "--json"])
        #expect(status.status == 0, "\(status.stderr)")
        let account = try #require((try CLIOutput.jsonObject(status.stdout)["accounts"] as? [[String: Any]])?.first)
        #expect(account["tenant_id"] as? String == tenant)
        try await world.assertNoSecretsLeaked()
    }

    @Test func showsASpinnerOnATerminal() async throws {
        let world = try await CLIHarness.start()
        defer { world.stop() }
        // script(1) gives authkit a pseudo-terminal, as a person's shell would.
        let command = ([TestPaths.product("authkit").path] + world.loginArguments()).joined(separator: " ")
        // A UTF-8 terminal without NO_COLOR (whatever the test runner's own environment says).
        let environment = world.environment.merging(world.browserEnvironment()) { _, new in new }
            .merging(["LC_ALL": "C.UTF-8"]) { _, new in new }.filter { $0.key != "NO_COLOR" }
        let result = try await offThePool {
            try ProcessRunner.run(
                URL(fileURLWithPath: "/usr/bin/script"), ["-qec", command, "/dev/null"], environment: environment, timeout: 60)
        }
        #expect(!result.timedOut)
        #expect(result.status == 0, "\(result.stdout)")
        #expect(result.stdout.contains("\r\u{1B}[K"), "the spinner line is redrawn in place")
        #expect(["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"].contains { result.stdout.contains($0) }, "a spinner frame was drawn")
        #expect(result.stdout.contains("Waiting for the sign-in in the browser… "), "the spinner says what it waits for")
        #expect(result.stdout.contains("✓ Signed in as Ada Lovelace (ada@example.test)"))
        let secrets = LeakScanner.secrets(issued: try await world.provider.issued())
        #expect(LeakScanner.scan([("the terminal", result.stdout)], for: secrets).isEmpty)

        // The same terminal under a non-UTF-8 locale, or with NO_COLOR, gets ASCII only.
        for setting in [["LC_ALL": "C"], ["LC_ALL": "C.UTF-8", "NO_COLOR": "1"]] {
            let plain = try await offThePool {
                try ProcessRunner.run(
                    URL(fileURLWithPath: "/usr/bin/script"), ["-qec", command, "/dev/null"],
                    environment: environment.merging(setting) { _, new in new }, timeout: 60)
            }
            #expect(plain.status == 0, "\(setting): \(plain.stdout)")
            #expect(plain.stdout.contains("Signed in as Ada Lovelace (ada@example.test)"), "\(plain.stdout)")
            #expect(plain.stdout.unicodeScalars.allSatisfy { $0.isASCII }, "\(setting): \(plain.stdout)")
        }
        try await world.assertNoSecretsLeaked()
    }
}

/// `login` checks the store before the browser, so a person never
/// consents only to lose the sign-in.
@Suite struct LoginStoreCheckTests {
    @Test func noSessionBusFailsBeforeAnyURLIsShown() async throws {
        let world = try await CLIHarness.start()
        defer { world.stop() }
        var environment = world.browserEnvironment(user: "ada")
        environment["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=/nonexistent/bus"
        let started = Date()
        let login = try await world.authkit(world.loginArguments(["--no-browser"]), environment: environment, timeout: 30)
        #expect(login.status == 3, "\(login.status): \(login.stderr)")
        #expect(Date().timeIntervalSince(started) < 20, "a bound, not a measurement: without the check the wait runs to --timeout")
        #expect(login.stderr.contains("no D-Bus session bus") && login.stderr.contains("--storage kernel-keyring"), "\(login.stderr)")
        #expect(!login.stderr.contains("http://127.0.0.1:") && !login.stderr.contains("/authorize"), "a URL was shown: \(login.stderr)")
        #expect(try await world.provider.log().count(endpoint: "token") == 0)
        try await world.assertNoSecretsLeaked()
    }
}

/// A client the provider does not know fails in seconds, before the browser opens,
/// with its own exit code (7), not a five-minute wait ending in a misleading hint.
@Suite struct ClientPreflightTests {
    @Test func anUnknownClientIDFailsFastWithExitSeven() async throws {
        let world = try await CLIHarness.start()
        defer { world.stop() }
        let arguments = [
            "login", "--issuer", world.provider.issuer.absoluteString, "--client-id", "no-such-client", "--group", world.group,
            "--no-browser",
        ]
        let started = Date()
        let login = try await world.authkit(arguments, environment: world.browserEnvironment(user: "ada"), timeout: 30)
        #expect(Date().timeIntervalSince(started) < 10)
        #expect(login.status == 7, "\(login.status): \(login.stderr)")
        #expect(login.stderr.contains("does not accept the client id 'no-such-client'"), "\(login.stderr)")
        #expect(!login.stderr.contains("/authorize?"), "the URL was shown: \(login.stderr)")
        try await world.assertNoSecretsLeaked()
    }

    /// The right client id is not refused by the pre-flight (authlib answers it invalid_grant).
    @Test func theRightClientSignsInDespiteThePreflight() async throws {
        let world = try await CLIHarness.start()
        defer { world.stop() }
        try await world.signIn(user: "ada")
        let log = try await world.provider.log()
        #expect(log.count(endpoint: "token_preflight") == 1, "one pre-flight before the browser")
        #expect(log.count(grantType: "authorization_code") == 1, "and one real code exchange")
        try await world.assertNoSecretsLeaked()
    }
}
