import Foundation
import Synchronization
import Testing
import TestSupport

/// One group's shared sign-in in a private keyring, made by `authkit login`.
final class KeyringSignIn: Sendable {
    let keyring: PrivateSecretService
    let provider: OIDCTestProvider
    let group = "test.race.\(UUID().uuidString.prefix(8).lowercased())"
    let authkit: URL
    let outputs = Mutex<[String]>([])

    /// Signs in; with `stale` the access token lives 1 s (stale at once for `--min-ttl 60`),
    /// after which the provider issues hour-long ones again.
    init(stale: Bool = true, options: OIDCTestProvider.Options = OIDCTestProvider.Options()) async throws {
        authkit = try Authkit.executable()
        keyring = try await offThePool {
            // gnome-keyring gets 15 s to come up; on a machine under heavy load that can fall
            // short once, so it gets one more go.
            do { return try PrivateSecretService() } catch { return try PrivateSecretService() }
        }
        provider = try await offThePool { try OIDCTestProvider.start(options: options) }
        if stale { try await provider.configure(["access_token_ttl": 1]) }
        let client = try #require(provider.publicClient)
        let login = try await exec(
            ["login", "--issuer", provider.issuer.absoluteString, "--client-id", client.clientID, "--group", group, "--timeout", "60"],
            extra: ScriptedBrowser(for: provider).environment)
        try #require(login.status == 0, "authkit login failed: \(login.stderr)")
        try await provider.configure(["access_token_ttl": 3600])
    }

    deinit {
        // Stopping waits for the daemons to exit: not on the cooperative pool.
        let provider = self.provider, keyring = self.keyring
        Thread.detachNewThread {
            provider.stop()
            keyring.stop()
        }
    }

    /// `$XDG_STATE_HOME/authkit/locks/<group>.lock` of the private session.
    var lockPath: String { (keyring.environment["XDG_STATE_HOME"] ?? "") + "/authkit/locks/\(group).lock" }

    /// Runs `authkit` in the private session; its stderr (and stdout unless `keepStdout` is
    /// false) go to the leak scan.
    func run(_ arguments: [String], extra: [String: String] = [:], timeout: TimeInterval = 60, scanStdout: Bool = true) throws
        -> ProcessResult
    {
        // Only what this test sets: another test may setenv() AUTHKIT_* in this process meanwhile.
        let clean = keyring.environment.filter { !$0.key.hasPrefix("AUTHKIT_") || $0.key.hasPrefix("AUTHKIT_TEST_") }
        let result = try ProcessRunner.run(authkit, arguments, environment: clean, extraEnvironment: extra, timeout: timeout)
        outputs.withLock {
            $0.append(result.stderr); if scanStdout { $0.append(result.stdout) }
        }
        return result
    }

    /// ``run(_:extra:timeout:scanStdout:)`` on a thread of its own, for async test bodies.
    func exec(_ arguments: [String], extra: [String: String] = [:], timeout: TimeInterval = 60, scanStdout: Bool = true) async throws
        -> ProcessResult
    {
        try await offThePool { try self.run(arguments, extra: extra, timeout: timeout, scanStdout: scanStdout) }
    }

    /// `authkit token` for the group, off the cooperative pool.
    func execToken(timeout: TimeInterval = 60) async throws -> ProcessResult {
        try await offThePool { try self.token(timeout: timeout) }
    }

    /// `authkit token` for the group: stdout is the token (the one output allowed to hold it).
    func token(_ extra: [String] = [], timeout: TimeInterval = 60) throws -> ProcessResult {
        try run(["token", "--group", group, "--min-ttl", "60"] + extra, timeout: timeout, scanStdout: false)
    }

    func issuedAccessTokens() async throws -> [PeerJSON] {
        try await provider.issued()["items"].array.filter { $0["kind"] == "access_token" }
    }

    func expectNoSecretsLeaked(sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let secrets = try await provider.issuedSecrets().filter { $0.count >= 8 }
        for text in outputs.withLock({ $0 }) {
            for secret in secrets where text.contains(secret) {
                Issue.record(
                    "a secret appears in authkit's output: \(text.replacingOccurrences(of: secret, with: "<SECRET>").prefix(300))",
                    sourceLocation: sourceLocation)
            }
        }
    }
}
