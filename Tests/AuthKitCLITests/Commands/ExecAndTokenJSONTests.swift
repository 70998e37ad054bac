import Foundation
import TestSupport
import Testing

/// `authkit exec` (the token in an environment variable, never in argv) and
/// `authkit token --json` / `--id-token`.
@Suite struct ExecAndTokenJSONTests {
    @Test func execPutsTheTokenInTheEnvironmentAndExitsWithTheCommand() async throws {
        let world = try await CLIHarness.start()
        defer { world.stop() }
        try await world.signIn(user: "ada")
        let token = try await world.authkit(["token", "--group", world.group])
        let expected = world.scratch.appendingPathComponent("expected-token")
        try token.stdout.trimmingCharacters(in: .whitespacesAndNewlines).write(to: expected, atomically: false, encoding: .utf8)
        // The child sees the token in the variable, and no process's argv holds it.
        let script = #"[ "$GITHUB_TOKEN" = "$(cat "$1")" ] && ! grep -qa "$GITHUB_TOKEN" /proc/$$/cmdline && exit 7"#
        let result = try await world.authkit([
            "exec", "--group", world.group, "--env", "GITHUB_TOKEN", "--", "/bin/sh", "-c", script, "sh", expected.path,
        ])
        #expect(result.status == 7, "\(result.status): \(result.stderr)")
        #expect(result.stdout.isEmpty)
        // The default variable; authkit is replaced by the command, whose status is the result.
        let plain = try await world.authkit(["exec", "--group", world.group, "--", "/bin/sh", "-c", #"[ -n "$AUTHKIT_TOKEN" ] && exit 42"#])
        #expect(plain.status == 42, "\(plain.status)")
        let missing = try await world.authkit(["exec", "--group", world.group, "--", "/nonexistent/command"])
        #expect(missing.status == 127 && missing.stderr.contains("cannot run"), "\(missing.status): \(missing.stderr)")
        let badName = try await world.authkit(["exec", "--group", world.group, "--env", "1X", "--", "true"])
        #expect(badName.status == 2)
        // Names the loader or the shell read before the command: refused before any token is read.
        for name in [
            "LD_PRELOAD", "LD_LIBRARY_PATH", "PATH", "HOME", "IFS", "SHELL", "PWD", "BASH_ENV", "ENV", "GLIBC_TUNABLES", "MALLOC_CHECK_",
            "NODE_OPTIONS", "JAVA_TOOL_OPTIONS", "AUTHKIT_CONFIG", "RES_OPTIONS", "https_proxy", "LC_ALL", "GIT_ASKPASS", "EDITOR",
            "A-B", "X=Y", "",
        ] {
            let refused = try await world.authkit(["exec", "--group", world.group, "--env", name, "--", "env"])
            #expect(refused.status == 2 && refused.stdout.isEmpty, "--env \(name): \(refused.status) \(refused.stdout)")
            #expect(refused.stderr.contains("--env"), "--env \(name): \(refused.stderr)")
        }
        // A descriptor authkit's own parent gave it passes on to CMD (as with any exec); none of
        // authkit's own does. Run from a shell that opens descriptor 7 for it.
        let authkit = TestPaths.product("authkit").path
        let inherited = try await offThePool {
            try ProcessRunner.run(
                URL(fileURLWithPath: "/bin/sh"),
                ["-c", #"exec 7</dev/null; exec "$0" exec --group "$1" -- /bin/sh -c 'ls /proc/$$/fd'"#, authkit, world.group],
                environment: world.environment)
        }
        let descriptors = Set(inherited.stdout.split(separator: "\n").compactMap { Int($0) })
        #expect(inherited.status == 0 && descriptors.isSuperset(of: [0, 1, 2, 7]), "\(inherited.stdout) \(inherited.stderr)")
        #expect(descriptors.subtracting([0, 1, 2, 7]).count <= 1, "authkit's own descriptors reached CMD: \(descriptors)")
        try await world.assertNoSecretsLeaked()
    }

    /// CMD's signals are its own: it starts with none blocked or ignored (authkit runs on a
    /// Swift concurrency thread, whose blocked mask would otherwise pass through exec), so
    /// Ctrl-C, timeout(1), a systemd stop and an SSH hang-up end it with its own status.
    @Test func execHandsTheCommandItsOwnSignals() async throws {
        let world = try await CLIHarness.start()
        defer { world.stop() }
        try await world.signIn(user: "ada")
        let status = try await world.authkit(["exec", "--group", world.group, "--", "grep", "-E", "^Sig(Blk|Ign):", "/proc/self/status"])
        #expect(status.status == 0, "\(status.stderr)")
        // (glibc's own signals 32 and 33 too, which its sigaction refuses: ak_unignore_reserved_signals.)
        let masks = status.stdout.split(separator: "\n").map { UInt64($0.split(separator: "\t").last ?? "", radix: 16) ?? .max }
        #expect(masks == [0, 0], "\(status.stdout)")
        for signal in [SIGINT, SIGTERM, SIGHUP] {
            let arguments = ["exec", "--group", world.group, "--", "sleep", "600"]
            let sleeper = try world.start(arguments)
            // Sent once authkit has become `sleep` (the event, not a pause).
            try await until("authkit exec became sleep") {
                (try? String(contentsOfFile: "/proc/\(sleeper.pid)/comm", encoding: .utf8)) == "sleep\n" || !sleeper.isRunning
            }
            kill(sleeper.pid, signal)
            // The status says the signal ended it: the sleep alone would last ten minutes.
            let ended = try await world.finish(sleeper, arguments, timeout: 60)
            #expect(ended.status == 128 + signal, "signal \(signal): status \(ended.status)")
        }
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
        let active = try await world.provider.issued()["items"].array.filter { $0["kind"] == "access_token" }.compactMap {
            $0["value"].string
        }
        #expect((object["access_token"] as? String).map(active.contains) == true)

        let id = try await world.authkit(["token", "--id-token", "--group", world.group])
        #expect(id.status == 0, "\(id.stderr)")
        let idTokens = try await world.provider.issued()["items"].array.filter { $0["kind"] == "id_token" }.compactMap {
            $0["value"].string
        }
        #expect(idTokens.contains(id.stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
        // An id_token that must outlive the one stored: refreshed (the provider sends one on refresh).
        try await world.provider.clearLog()
        let longer = try await world.authkit(["token", "--id-token", "--min-ttl", "3590", "--group", world.group])
        #expect(longer.status == 0 || longer.status == 2, "\(longer.stderr)")
        try await world.assertNoSecretsLeaked()
    }
}
