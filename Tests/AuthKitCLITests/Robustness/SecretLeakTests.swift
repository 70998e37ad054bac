import Foundation
import TestSupport
import Testing

/// No token, code, verifier or client secret in anything authkit prints or a peer logs —
/// except the access token `authkit token` prints on purpose. Every other test of this target
/// ends with the same scan of its own world; this one drives every path that handles a
/// secret, failures included, through one provider, so every kind of secret is issued and
/// looked for.
@Suite struct SecretLeakTests {
    @Test func scannerFindsWholeAndShortenedSecrets() {
        let opaque = LeakScanner.Secret(kind: "refresh_token", value: "Zq3vL9xR2mT8wK4pN6yB1cD5fG7hJ0sA-_eUoIiYtRw")
        let jwt = LeakScanner.Secret(
            kind: "id_token",
            value:
                "eyJhbGciOiJSUzI1NiIsImtpZCI6ImsxIn0.eyJzdWIiOiJhZGEiLCJub25jZSI6Im4xMjM0NTY3ODkwIn0.c2lnbmF0dXJlLWJ5dGVzLWhlcmUtMTIzNDU2Nzg5MA"
        )
        let sources = [
            ("clean", "Signed in as Ada Lovelace"),
            ("whole", "error: \(opaque.value) was rejected"),
            ("prefix", "refresh token Zq3vL9xR2mT8… rejected"),
            ("signature", "bad signature c2lnbmF0dXJlLWJ5dGVzLWhlcmUtMTIzNDU2Nzg5MA"),
            ("header only", "eyJhbGciOiJSUzI1NiIsImtpZCI6ImsxIn0 is every RS256 token's header"),
        ]
        let findings = LeakScanner.scan(sources, for: [opaque, jwt])
        #expect(Set(findings.map(\.source)) == ["whole", "prefix", "signature"])
        #expect(findings.allSatisfy { !$0.description.contains(opaque.value) && !$0.description.contains("c2lnbmF0dXJl") })
    }

    @Test func noSecretInAnyOutputOrLog() async throws {
        var options = OIDCTestProvider.Options()
        options.deviceInterval = 1
        let world = try await CLIHarness.start(graph: true, provider: options)
        defer { world.stop() }
        let graph = try #require(world.graph)
        let confidential = try #require(world.provider.confidentialClient)
        let secret = try #require(confidential.clientSecret)

        // Browser sign-in of a confidential client, its secret from the environment.
        let confidentialGroup = "org.example.confidential"
        let viaSecret = try await world.authkit(
            [
                "login", "--issuer", world.provider.issuer.absoluteString, "--client-id", confidential.clientID, "--group",
                confidentialGroup, "--json",
            ],
            environment: world.browserEnvironment(user: "alan").merging(["AUTHKIT_CLIENT_SECRET": secret]) { _, new in new }, timeout: 60)
        #expect(viaSecret.status == 0, "\(viaSecret.stderr)")

        // Paste mode, with a forged paste first.
        let pasteArguments = world.loginArguments(["--paste"])
        let paste = try world.start(pasteArguments, environment: world.browserEnvironment())
        let url = try #require(await paste.waitForStderr { CLIOutput.authorizationURL(in: $0) })
        let redirect = try await offThePool { try ScriptedBrowser(user: "ada", for: world.provider).finalRedirect(for: url) }
        paste.send(redirect.absoluteString.replacingOccurrences(of: "state=", with: "state=x") + "\n")
        paste.send(redirect.absoluteString + "\n")
        #expect(try await world.finish(paste, pasteArguments).status == 0)

        // Device code in a third group.
        let deviceArguments = [
            "login", "--issuer", world.provider.issuer.absoluteString, "--client-id", CLIHarness.clientID,
            "--group", "org.example.device", "--device-code",
        ]
        let device = try world.start(deviceArguments)
        let code = try #require(await device.waitForStderr { CLIOutput.deviceCode(in: $0) })
        #expect(
            try await offThePool {
                try ScriptedBrowser(user: "grace", for: world.provider).approveDevice(verificationURI: code.uri, userCode: code.code)
            }.status == 0)
        #expect(try await world.finish(device, deviceArguments).status == 0)

        // Reading, refreshing, Graph with a 401 and a 403, every status form.
        for arguments in [
            ["status", "--group", world.group], ["status", "--group", world.group, "--json"], ["token", "--group", world.group],
            ["token", "--group", world.group, "--min-ttl", "7200", "--allow-shorter"],
            ["token", "--group", confidentialGroup, "--min-ttl", "7200", "--allow-shorter"],
        ] {
            try await world.authkit(arguments)
        }
        let userinfo = try #require(try await world.provider.discovery()["userinfo_endpoint"].string)
        #expect(try await world.authkit(["request", "-i", "--group", world.group, userinfo]).status == 0)
        #expect(try await world.authkit(["request", "--group", world.group, userinfo + "/missing"]).status == 22)
        try await graph.failNext(status: 401)
        #expect(try await world.authkit(["search", "ada", "--group", world.group]).status == 0)
        try await graph.failNext(status: 403)
        #expect(try await world.authkit(["search", "ada", "--group", world.group]).status == 1)
        _ = try await world.example()

        // Failures on the way: a refreshed id_token with a bad signature, a token endpoint
        // answering garbage, then an invalid_grant.
        try await world.provider.setFault(.idTokenBadSignature)
        #expect(try await world.authkit(["token", "--group", world.group, "--min-ttl", "7200", "--allow-shorter"]).status == 4)
        try await world.provider.setFault(.malformed("token"))
        #expect(try await world.authkit(["token", "--group", world.group, "--min-ttl", "7200", "--allow-shorter"]).status == 4)
        try await world.provider.setFault(.error("invalid_grant", grantType: "refresh_token"))
        #expect(try await world.authkit(["token", "--group", world.group, "--min-ttl", "7200", "--allow-shorter"]).status == 1)

        for group in [world.group, confidentialGroup, "org.example.device"] {
            #expect(try await world.authkit(["logout", "--group", group, "--all"]).status == 0)
        }

        let scanned = try await world.assertNoSecretsLeaked()
        let kinds = Set(LeakScanner.secrets(issued: try await world.provider.issued()).map(\.kind))
        for kind in ["authorization_code", "access_token", "refresh_token", "id_token", "device_code", "client_secret", "code_verifier"] {
            #expect(kinds.contains(kind), "the scan covered no \(kind)")
        }
        #expect(scanned > 20)
        // And the scan is not vacuous: the printed tokens are there, where they belong.
        #expect(world.runs.contains { $0.printsToken })
    }
}
