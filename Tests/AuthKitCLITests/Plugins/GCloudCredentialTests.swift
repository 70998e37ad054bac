import Foundation
import TestSupport
import Testing

/// Google's real auth library (google-auth) with a configuration from `authkit setup gcloud`:
/// it runs `authkit credential gcloud` and exchanges the id_token at an STS stand-in that checks
/// its signature against the provider's keys.
@Suite struct GCloudCredentialTests {
    // A workforce pool: the library looks no project up (that would need the network).
    static let audience = "//iam.googleapis.com/locations/global/workforcePools/authkit/providers/test"

    @Test(arguments: [false, true])
    func googleAuthExchangesTheVerifiedIDToken(agent: Bool) async throws {
        let world = try await CLIHarness.start(agent: agent)
        defer { world.stop() }
        try await world.signIn(user: "ada")
        let sts = try await offThePool {
            try GoogleSTSStandIn(acceptTokensFrom: world.provider, clientID: CLIHarness.clientID, audience: Self.audience)
        }
        defer { sts.stop() }
        let file = world.scratch.appendingPathComponent("gcloud.json").path
        let setup = try await world.authkit(
            ["setup", "gcloud", "--audience", Self.audience, "--token-url", sts.tokenURL, "--group", world.group, "--output", file])
        #expect(setup.status == 0, "\(setup.stderr)")
        let config = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: file))) as? [String: Any])
        #expect(
            config["type"] as? String == "external_account"
                && config["subject_token_type"] as? String == "urn:ietf:params:oauth:token-type:id_token")

        var environment = world.environment
        environment["GOOGLE_EXTERNAL_ACCOUNT_ALLOW_EXECUTABLES"] = "1"
        let client = TestPaths.packageRoot.appendingPathComponent("Tests/Peers/google_auth_client.py")
        let clientEnvironment = environment
        func google() async throws -> ProcessResult {
            let result = try await offThePool {
                try ProcessRunner.run(TestPaths.python, [client.path, file], environment: clientEnvironment, timeout: 120)
            }
            world.recordExternal("google-auth", [file], result)
            return result
        }
        let first = try await google()
        #expect(first.status == 0 && first.stdout.hasPrefix("ok "), "google-auth refreshed through authkit: \(first.stderr)")
        let exchanges = try await sts.exchanges()
        #expect(exchanges.count == 1 && exchanges[0].accepted, "\(exchanges)")

        // The contract, run directly: the document on stdout; a token type authkit cannot give
        // is the contract's failure, with the message, and a non-zero exit.
        let direct = try await world.authkit(["credential", "gcloud", "--group", world.group], environment: environment)
        let answer = try #require(try JSONSerialization.jsonObject(with: Data(direct.stdout.utf8)) as? [String: Any])
        #expect(
            direct.status == 0 && answer["success"] as? Bool == true && answer["version"] as? Int == 1 && answer["expiration_time"] is Int)
        let saml = try await world.authkit(
            ["credential", "gcloud", "--group", world.group],
            environment: environment.merging(["GOOGLE_EXTERNAL_ACCOUNT_TOKEN_TYPE": "urn:ietf:params:oauth:token-type:saml2"]) { $1 })
        #expect(
            saml.status == 2 && saml.stdout.contains(#""success":false"#) && saml.stderr.contains("id_tokens only"),
            "\(saml.stdout)\(saml.stderr)")
        // Google's interactive mode (stdout is the person's terminal) and its revocation get no
        // token: a failure naming authkit login, and success without revoking the shared sign-in.
        let interactive = try await world.authkit(
            ["credential", "gcloud", "--group", world.group],
            environment: environment.merging(["GOOGLE_EXTERNAL_ACCOUNT_INTERACTIVE": "1"]) { $1 })
        #expect(
            interactive.status == 2 && interactive.stdout.contains(#""success":false"#) && interactive.stderr.contains("authkit login")
                && !interactive.stdout.contains("id_token"), "\(interactive.stdout)\(interactive.stderr)")
        let revoke = try await world.authkit(
            ["credential", "gcloud", "--group", world.group],
            environment: environment.merging(["GOOGLE_EXTERNAL_ACCOUNT_REVOKE": "1"]) { $1 })
        let revoked = try #require(try JSONSerialization.jsonObject(with: Data(revoke.stdout.utf8)) as? [String: Any])
        #expect(revoke.status == 0 && revoked.count == 2 && revoked["success"] as? Bool == true, "\(revoke.stdout)\(revoke.stderr)")
        #expect(try await world.authkit(["token", "--group", world.group]).status == 0, "the sign-in is still there")
        // google-auth reads standard error with standard output: the configuration's warnings
        // (a profile not used here with an unknown key) stay off it.
        let warningConfig = world.scratch.appendingPathComponent("warning-config").path
        try "[profile other]\nisuer = https://x.example\n".write(toFile: warningConfig, atomically: false, encoding: .utf8)
        #expect(chmod(warningConfig, 0o600) == 0)
        let warned = try await world.authkit(
            ["token", "--group", world.group], environment: environment.merging(["AUTHKIT_CONFIG": warningConfig]) { $1 })
        #expect(warned.status == 0 && warned.stderr.contains("warning"), "the configuration does warn: \(warned.stderr)")
        let quiet = try await world.authkit(
            ["credential", "gcloud", "--group", world.group], environment: environment.merging(["AUTHKIT_CONFIG": warningConfig]) { $1 })
        #expect(quiet.status == 0 && quiet.stderr.isEmpty, "\(quiet.stderr)")

        // Signed out: google-auth reports authkit's message; the STS gets nothing.
        #expect(try await world.authkit(["logout", "--group", world.group]).status == 0)
        let signedOut = try await google()
        #expect(signedOut.status == 1 && signedOut.stderr.contains("nobody is signed in"), "\(signedOut.stderr)")
        #expect(try await sts.exchanges().count == 1)

        let issued = try await sts.exchanges().compactMap(\.accessToken).map { LeakScanner.Secret(kind: "Google access token", value: $0) }
        for finding in LeakScanner.scan(world.capturedText(), for: issued) { Issue.record("Google access token leaked: \(finding)") }
        try await world.assertNoSecretsLeaked()
    }
}
