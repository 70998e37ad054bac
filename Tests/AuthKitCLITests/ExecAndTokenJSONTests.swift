import Foundation
import TestSupport
import Testing

/// Issue 10: `authkit exec` (the token in an environment variable, never in argv) and
/// `authkit token --json` / `--id-token`.
@Suite struct ExecAndTokenJSONTests {
    @Test func execPutsTheTokenInTheEnvironmentAndExitsWithTheCommand() async throws {
        let world = try await CLIHarness.start()
        defer { world.stop() }
        try await world.signIn(user: "ada")
        let token = try await world.authkit(["token", "--group", world.group])
        let expected = world.scratch.appendingPathComponent("expected-token")
        try token.stdout.trimmingCharacters(in: .whitespacesAndNewlines).write(to: expected, atomically: true, encoding: .utf8)
        // The child sees the token in the variable, and no process's argv holds it.
        let script = #"[ "$GITHUB_TOKEN" = "$(cat "$1")" ] && ! grep -qa "$GITHUB_TOKEN" /proc/$$/cmdline && exit 7"#
        let result = try await world.authkit(["exec", "--group", world.group, "--env", "GITHUB_TOKEN", "--", "/bin/sh", "-c", script, "sh", expected.path])
        #expect(result.status == 7, "\(result.status): \(result.stderr)")
        #expect(result.stdout.isEmpty)
        // The default variable; authkit is replaced by the command, whose status is the result.
        let plain = try await world.authkit(["exec", "--group", world.group, "--", "/bin/sh", "-c", #"[ -n "$AUTHKIT_TOKEN" ] && exit 42"#])
        #expect(plain.status == 42, "\(plain.status)")
        let missing = try await world.authkit(["exec", "--group", world.group, "--", "/nonexistent/command"])
        #expect(missing.status == 127 && missing.stderr.contains("cannot run"), "\(missing.status): \(missing.stderr)")
        let badName = try await world.authkit(["exec", "--group", world.group, "--env", "1X", "--", "true"])
        #expect(badName.status == 2)
        try await world.assertNoSecretsLeaked()
    }

    @Test func tokenJSONAndIDToken() async throws {
        let world = try await CLIHarness.start()
        defer { world.stop() }
        try await world.signIn(user: "ada")
        let json = try await world.authkit(["token", "--json", "--group", world.group])
        #expect(json.status == 0, "\(json.stderr)")
        let object = try CLIOutput.jsonObject(json.stdout)
        #expect(Set(object.keys) == ["access_token", "token_type", "expires_at", "expires_in", "scopes", "account", "issuer"])
        #expect(object["token_type"] as? String == "Bearer" && object["account"] as? String == "ada@example.test")
        #expect(object["issuer"] as? String == world.provider.issuer.absoluteString)
        #expect((object["expires_in"] as? Int ?? 0) > 3000)
        let active = try await world.provider.issued()["items"].array.filter { $0["kind"] == "access_token" }.compactMap { $0["value"].string }
        #expect((object["access_token"] as? String).map(active.contains) == true)

        let id = try await world.authkit(["token", "--id-token", "--group", world.group])
        #expect(id.status == 0, "\(id.stderr)")
        let idTokens = try await world.provider.issued()["items"].array.filter { $0["kind"] == "id_token" }.compactMap { $0["value"].string }
        #expect(idTokens.contains(id.stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
        // An id_token that must outlive the one stored: refreshed (the provider sends one on refresh).
        try await world.provider.clearLog()
        let longer = try await world.authkit(["token", "--id-token", "--min-ttl", "3590", "--group", world.group])
        #expect(longer.status == 0 || longer.status == 2, "\(longer.stderr)")
        try await world.assertNoSecretsLeaked()
    }
}
