import Foundation
import Testing
import TestSupport
@testable import AuthKit

// No secret (code, verifier, tokens, client secret) appears in any log,
// error or test output. Each flow test scans what authkit said during it (SignInHarness,
// KeyringSignIn); this suite adds the values themselves and a tour of every `authkit` command
// against one provider, scanning all their output against the provider's /_test/issued list —
// all of it but `authkit token`'s stdout, whose job is to print the token.

private let secret = "S3CR3T-0123456789abcdef0123456789abcdef"

@Suite("No secrets in output")
struct SecretHygieneTests {
    @Test("values that hold secrets show none in print, debugPrint, dump or interpolation")
    func valuesHideSecrets() throws {
        var verifierValue = ""
        let subjects: [Any] = try {
            let verifier = try PKCEVerifier()
            verifierValue = verifier.value
            return [
                TokenResponse(accessToken: secret, expiresIn: 60, refreshToken: secret, idToken: secret, scopes: nil, receivedAt: Date()),
                AuthorizationGrant(code: secret, issuer: nil),
                try AuthorizationCallback(query: "code=\(secret)&state=abc"),
                DeviceAuthorization(
                    deviceCode: secret, userCode: "ABCD-EFGH", verificationURI: URL(string: "https://idp.example/device")!,
                    verificationURIComplete: nil, expiresAt: Date(), interval: .seconds(5)),
                AccessToken(value: secret, expiresAt: Date(), scopes: ["openid"], account: "ada", refreshed: false),
                OAuthClient(clientID: "cli", clientSecret: ClientSecret(secret)),
                ClientSecret(secret),
                verifier,
                try AuthorizationRequest(
                    authorizationEndpoint: URL(string: "https://idp.example/authorize")!, clientID: "cli",
                    redirectURI: "http://127.0.0.1:1234/", scopes: ["openid"]),
            ]
        }()
        for subject in subjects {
            var dumped = ""
            dump(subject, to: &dumped)
            for text in ["\(subject)", String(reflecting: subject), dumped] {
                #expect(!text.contains(secret), "\(type(of: subject)) shows a secret")
                #expect(!text.contains(verifierValue), "\(type(of: subject)) shows the PKCE verifier")
            }
        }
    }

    @Test("every authkit command's output (but token's stdout) is free of issued values, across successes and failures")
    func commandTour() async throws {
        let signIn = try await KeyringSignIn(stale: true)
        let provider = signIn.provider, group = signIn.group
        let public_ = try #require(provider.publicClient), confidential = try #require(provider.confidentialClient)
        let browser = ScriptedBrowser(for: provider).environment
        func authkit(_ arguments: [String], extra: [String: String] = [:]) async throws -> ProcessResult {
            try await signIn.exec(arguments, extra: extra, timeout: 60, scanStdout: arguments.first != "token")
        }

        // A refresh (the access token lived 1 s) and a read from the store.
        #expect(try await signIn.execToken().status == 0)
        #expect(try await signIn.execToken().status == 0)
        #expect(try await authkit(["status", "--group", group]).status == 0)
        #expect(try await authkit(["status", "--group", group, "--json"]).status == 0)
        // Another scope the grant does not cover: the provider refuses it, a typed error.
        #expect(try await authkit(["token", "--group", group, "--scope", "User.ReadBasic.All"]).status != 0)
        // The refresh token used up behind authkit's back: login needed.
        try await provider.configure(["access_token_ttl": 1])
        #expect(
            try await authkit(
                [
                    "login", "--issuer", provider.issuer.absoluteString, "--client-id", public_.clientID, "--group", group, "--timeout",
                    "60",
                ], extra: browser
            ).status == 0)
        try await Task.sleep(for: .seconds(1.1))
        let stored = try await provider.issued()["items"].array.last { $0["kind"] == "refresh_token" }?["value"].string
        let used = try await TestHTTP.postForm(
            provider.issuer.appendingPathComponent("token"),
            [("grant_type", "refresh_token"), ("refresh_token", try #require(stored)), ("client_id", public_.clientID)])
        #expect(used.status == 200)
        let refused = try await signIn.execToken()
        #expect(refused.status == 1, "\(refused.stderr)")
        // The person denies; the provider reports an error at the token endpoint.
        #expect(
            try await authkit(
                [
                    "login", "--issuer", provider.issuer.absoluteString, "--client-id", public_.clientID, "--group", group, "--timeout",
                    "60",
                ],
                extra: ScriptedBrowser(deny: true, for: provider).environment
            ).status != 0)
        try await provider.setFault(.error("invalid_grant", description: "The code was already used"))
        #expect(
            try await authkit(
                [
                    "login", "--issuer", provider.issuer.absoluteString, "--client-id", public_.clientID, "--group", group, "--timeout",
                    "60",
                ], extra: browser
            ).status != 0)
        try await provider.setFault(.idTokenBadSignature)
        #expect(
            try await authkit(
                [
                    "login", "--issuer", provider.issuer.absoluteString, "--client-id", public_.clientID, "--group", group, "--timeout",
                    "60",
                ], extra: browser
            ).status != 0)
        // The confidential client, its secret from the environment.
        try await provider.configure(["access_token_ttl": 3600])
        let secretEnvironment = browser.merging(["AUTHKIT_CLIENT_SECRET": try #require(confidential.clientSecret)]) { $1 }
        #expect(
            try await authkit(
                [
                    "login", "--issuer", provider.issuer.absoluteString, "--client-id", confidential.clientID, "--group", group,
                    "--timeout", "60",
                ], extra: secretEnvironment
            ).status == 0)
        #expect(
            try await authkit(["token", "--group", group, "--min-ttl", "7200", "--allow-shorter"], extra: secretEnvironment).status == 0)
        // Sign-out with revocation.
        let logout = try await authkit(["logout", "--group", group, "--all"])
        #expect(logout.status == 0, "\(logout.stderr)")
        #expect(try await provider.log().count(endpoint: "revocation") >= 1)
        #expect(try await signIn.execToken().status == 1)

        try await signIn.expectNoSecretsLeaked()
        #expect(signIn.outputs.withLock { $0.count } >= 20)
    }
}
