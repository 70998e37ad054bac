import Foundation
import TestSupport
import Testing

/// `authkit request`: the shared sign-in's token on one HTTP request — a DPoP proof with it
/// for a bound sign-in, made by the agent for a forward, whose side never holds the key.
@Suite struct RequestCommandTests {
    static let dpop = OIDCTestProvider.Options.dpopAndPAR

    static func userinfo(_ world: CLIHarness) async throws -> String {
        try #require(try await world.provider.discovery()["userinfo_endpoint"].string)
    }

    @Test func aDPoPSignInsRequestStatusAndToken() async throws {
        let world = try await CLIHarness.start(provider: Self.dpop)
        defer { world.stop() }
        try await world.signIn()
        let userinfo = try await Self.userinfo(world)

        let request = try await world.authkit(["request", "--group", world.group, userinfo])
        #expect(request.status == 0, "\(request.stderr)")
        #expect(try CLIOutput.jsonObject(request.stdout)["preferred_username"] as? String == "ada@example.test", "\(request.stdout)")
        #expect(request.stderr.isEmpty, "\(request.stderr)")

        let included = try await world.authkit(["request", "-i", "--group", world.group, userinfo])
        #expect(included.status == 0 && included.stdout.hasPrefix("HTTP 200\r\n"), "\(included.stdout)")

        let status = try await world.authkit(["status", "--json", "--group", world.group])
        let account = try #require((try CLIOutput.jsonObject(status.stdout)["accounts"] as? [[String: Any]])?.first)
        #expect(account["token_type"] as? String == "DPoP" && account["dpop_key"] as? String == "store", "\(status.stdout)")
        let text = try await world.authkit(["status", "--group", world.group])
        #expect(text.stdout.contains("bound to key:   DPoP"), "\(text.stdout)")

        let token = try await world.authkit(["token", "--json", "--group", world.group])
        #expect(try CLIOutput.jsonObject(token.stdout)["token_type"] as? String == "DPoP")

        // HTTP ≥ 400: the body on stdout, one line on stderr, exit 22.
        let missing = try await world.authkit(["request", "--group", world.group, world.provider.issuer.absoluteString + "/no-such-thing"])
        #expect(missing.status == 22, "\(missing.status) \(missing.stderr)")
        #expect(
            missing.stderr.split(separator: "\n").count == 1 && missing.stderr.hasPrefix("authkit: HTTP 404 from "), "\(missing.stderr)")

        // authkit's own headers are its own; nonsense is a usage error before anything is sent.
        for bad in [["--header", "Authorization: Bearer x"], ["--header", "no colon"], ["--method", "GE T"], ["ftp://example.test/"]] {
            let refused = try await world.authkit(["request", "--group", world.group] + bad + (bad.count == 1 ? [] : [userinfo]))
            #expect(refused.status == 2 && refused.stdout.isEmpty, "\(bad): \(refused.stderr)")
        }
        #expect(world.dpopPrivateKeys().count == 1, "the leak scan looks for the stored DPoP key too")
        try await world.assertNoSecretsLeaked()
    }

    /// Refused before anything is sent: a method that would echo or tunnel the token, and a
    /// body longer than `--data` takes (never sent cut short).
    @Test func refusesAnEchoATunnelAndABodyItWouldCut() async throws {
        let home = try TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: home) }
        let environment = ["HOME": home.path, "PATH": "/usr/bin:/bin", "AUTHKIT_AGENT": "off"]
        for method in ["TRACE", "connect"] {
            let result = try await offThePool {
                try ProcessRunner.run(
                    TestPaths.product("authkit"), ["request", "-X", method, "https://api.example/"], environment: environment)
            }
            #expect(result.status == 2 && result.stderr.contains("does not send \(method.uppercased())"), "\(result.stderr)")
        }
        let long = String(repeating: "a", count: (32 << 20) + 1)
        let result = try await offThePool {
            try ProcessRunner.run(
                TestPaths.product("authkit"), ["request", "--data", "@-", "https://api.example/"], environment: environment, stdin: long)
        }
        #expect(result.status == 2 && result.stderr.contains("longer than 32 MiB"), "\(result.stderr)")
    }

    @Test func aBearerSignInSendsBearer() async throws {
        let world = try await CLIHarness.start(provider: Self.dpop)
        defer { world.stop() }
        try await world.signIn(user: "ada", ["--dpop", "never"])
        let request = try await world.authkit(["request", "--group", world.group, try await Self.userinfo(world)])
        #expect(request.status == 0, "\(request.stderr)")
        let status = try await world.authkit(["status", "--json", "--group", world.group])
        let account = try #require((try CLIOutput.jsonObject(status.stdout)["accounts"] as? [[String: Any]])?.first)
        #expect(account["token_type"] as? String == "Bearer" && account["dpop_key"] is NSNull, "\(status.stdout)")
        #expect(try await world.provider.dpopLog()["counts"]["received"].int == 0)
        try await world.assertNoSecretsLeaked()
    }

    /// A sandbox behind a forwarded socket makes DPoP requests: the agent signs each proof, the
    /// key and the refresh token stay on the machine that forwarded it.
    @Test func aForwardsRequestIsProvedByTheAgent() async throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/bwrap") else {
            Issue.record("bubblewrap is missing: run ./scripts/bootstrap")
            return
        }
        let world = try await CLIHarness.start(provider: Self.dpop)
        defer { world.stop() }
        try await world.signIn()
        let userinfo = try await Self.userinfo(world)
        let (forward, socket) = try await AgentForwardTests.forward(world)
        defer {
            forward.send(signal: SIGTERM)
            forward.wait(timeout: 10)
        }
        let command = ["authkit", "request", userinfo]
        let inside = try await offThePool { try AgentForwardTests.sandboxed(command, socket: socket) }
        world.recordExternal("authkit", Array(command.dropFirst()), inside)
        #expect(inside.status == 0, "\(inside.stderr)")
        #expect(inside.stdout.contains("ada@example.test"), "\(inside.stdout)")
        // The provider took a proof with the token's hash, signed by the sign-in's key.
        let proofs = try await world.provider.dpopLog()["proofs"].array
        let used = try #require(proofs.last { $0["endpoint"].string == "userinfo" && $0["accepted"].bool == true }, "\(proofs)")
        #expect(used["ath_present"].bool == true)
        let issued = try await world.provider.issued()["items"].array
        #expect(issued.contains { $0["kind"].string == "access_token" && $0["jkt"].string == used["jkt"].string })
        try await world.assertNoSecretsLeaked()
    }
}
