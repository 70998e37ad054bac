import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The kernel keyring through the real binary: sign in, status, token, a refresh race, logout and the
/// leak scan with `--storage kernel-keyring` — the same things the Secret Service store is
/// held to. The persistent keyring belongs to the user and outlives the test, so each world
/// uses a group of its own and signs out at the end.
@Suite struct KernelKeyringCLITests {
    @Test func theWholeLifeOfASignInInTheKernelKeyring() async throws {
        let group = "com.example.kernel-\(UInt32.random(in: 0...UInt32.max))"
        defer { Keyctl.removeGroup(group) }
        let world = try await CLIHarness.start(group: group)
        defer { world.stop() }
        let storage = ["--storage", "kernel-keyring"]
        let login = try await world.authkit(world.loginArguments(storage), environment: world.browserEnvironment(user: "ada"), timeout: 60)
        #expect(login.status == 0, "\(login.stderr)")
        #expect(login.stderr.contains("kernel keyring") && login.stderr.contains("memory only"), "\(login.stderr)")

        let status = try await world.authkit(["status", "--json", "--group", group] + storage)
        #expect(status.status == 0, "\(status.stderr)")
        let account = try #require((try CLIOutput.jsonObject(status.stdout)["accounts"] as? [[String: Any]])?.first)
        let where_ = try #require(account["storage"] as? [String: Any])
        #expect(where_["kind"] as? String == "kernel-keyring" && where_["memory_only"] as? Bool == true)
        #expect((where_["keyring"] as? Int ?? 0) > 0)
        // The Secret Service does not have it: the stores are separate.
        #expect(try await world.authkit(["token", "--group", group, "--storage", "secret-service"]).status == 1)

        // AUTHKIT_STORAGE chooses it as well; a refresh race of eight processes makes one refresh.
        try TerminalSafetyTests.tamperKernel(group: group, issuer: world.provider.issuer.absoluteString) {
            $0["access_token_expires_at"] = Date().timeIntervalSince1970 - 10
        }
        try await world.provider.clearLog()
        let results = try await withThrowingTaskGroup(of: ProcessResult.self) { tasks in
            for _ in 0..<8 {
                tasks.addTask { try await world.authkit(["token", "--group", group], environment: ["AUTHKIT_STORAGE": "kernel-keyring"]) }
            }
            return try await tasks.reduce(into: []) { $0.append($1) }
        }
        #expect(results.allSatisfy { $0.status == 0 }, "\(results.map(\.stderr))")
        #expect(Set(results.map(\.stdout)).count == 1, "every process printed the same new token")
        #expect(try await world.provider.log().grantTypes["refresh_token", default: 0] == 1)

        // setup --storage writes the store into the client's configuration: docker, which runs
        // its helper with no flags, finds the kernel-keyring sign-in through the mapping.
        let docker = world.scratch.appendingPathComponent("docker")
        let setup = try await world.authkit(
            ["setup", "docker", "--registry", "registry.example.com", "--group", group, "--link-dir", world.scratch.path] + storage,
            environment: ["DOCKER_CONFIG": docker.path])
        #expect(setup.status == 0, "\(setup.stderr)")
        let mapped = try await world.authkit(["credential", "docker", "get"], stdin: "registry.example.com\n")
        #expect(mapped.status == 0 && mapped.stdout.contains("\"Secret\""), "\(mapped.stdout) \(mapped.stderr)")
        // The command line's store still wins over the mapping's (--insecure-storage: the
        // plain file, where nobody is signed in).
        let insecure = try await world.authkit(["credential", "docker", "--insecure-storage", "get"], stdin: "registry.example.com\n")
        #expect(insecure.status == 1 && !insecure.stdout.contains("Secret"), "\(insecure.stdout) \(insecure.stderr)")
        let printed = try await world.authkit(["setup", "git", "--host", "https://git.example.com", "--print"] + storage)
        #expect(printed.stdout.contains("storage = kernel-keyring"), "\(printed.stdout)")

        let logout = try await world.authkit(["logout", "--group", group] + storage)
        #expect(logout.status == 0, "\(logout.stderr)")
        #expect(try await world.authkit(["token", "--group", group] + storage).status == 1)
        try await world.assertNoSecretsLeaked()
    }

    /// The second hour after `login --storage kernel-keyring` on a machine without a session
    /// bus: every later command finds the sign-in without the flag (login recorded where it
    /// went), says where it is and why; a flag still wins; the last logout forgets the record.
    @Test func theSignInIsFoundWhereItWasStoredWithoutTheFlag() async throws {
        let group = "com.example.kernel-\(UInt32.random(in: 0...UInt32.max))"
        defer { Keyctl.removeGroup(group) }
        let world = try await CLIHarness.start(group: group)
        defer { world.stop() }
        let noBus = ["DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent/bus"]
        let login = try await world.authkit(
            world.loginArguments(["--storage", "kernel-keyring"]), environment: world.browserEnvironment(user: "ada").merging(noBus) { $1 },
            timeout: 60)
        #expect(login.status == 0, "\(login.stderr)")

        let status = try await world.authkit(["status", "--group", group], environment: noBus)
        #expect(status.status == 0 && status.stdout.contains("kernel keyring"), "\(status.stdout) \(status.stderr)")
        let token = try await world.authkit(["token", "--group", group], environment: noBus)
        #expect(token.status == 0 && !token.stdout.isEmpty, "\(token.stderr)")
        let map = try await world.authkit(["config", "--group", group], environment: noBus)
        #expect(map.stdout.contains("where the group's last sign-in was saved"), "\(map.stdout) \(map.stderr)")
        // git through a mapping written without --storage.
        let setup = try await world.authkit(["setup", "git", "--host", "https://git.example.com", "--group", group], environment: noBus)
        #expect(setup.status == 0, "\(setup.stderr)")
        let git = try await world.authkit(
            ["credential", "git", "get"], environment: noBus, stdin: "protocol=https\nhost=git.example.com\n\n")
        #expect(git.status == 0 && git.stdout.contains("password="), "\(git.stderr)")
        // A flag wins over the record: the Secret Service (unreachable here) is asked.
        #expect(try await world.authkit(["token", "--group", group, "--storage", "secret-service"], environment: noBus).status == 3)

        let logout = try await world.authkit(["logout", "--group", group], environment: noBus)
        #expect(logout.status == 0, "\(logout.stderr)")
        let record = world.stateDirectory.appendingPathComponent("storage").path
        #expect(!((try? String(contentsOfFile: record, encoding: .utf8)) ?? "").contains(group), "the record went with the last sign-in")
        let after = try await world.authkit(["token", "--group", group], environment: noBus)
        #expect(after.status == 3, "back to the default store, which is unreachable here: \(after.stderr)")
        try await world.assertNoSecretsLeaked()
    }

    /// keyctl blocked: one line naming the alternatives, exit 3.
    /// The note of where a group's sign-in is kept cannot be written (a state folder others
    /// may write, which authkit never trusts): login succeeds and says so, with what to do.
    @Test func aStorageRecordThatCannotBeWrittenIsSaidAtLogin() async throws {
        let group = "com.example.kernel-\(UInt32.random(in: 0...UInt32.max))"
        defer { Keyctl.removeGroup(group) }
        let world = try await CLIHarness.start(group: group)
        defer { world.stop() }
        let state = try #require(world.environment["XDG_STATE_HOME"]) + "/authkit"
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
        #expect(chmod(state, 0o777) == 0)
        let login = try await world.authkit(
            world.loginArguments(["--storage", "kernel-keyring"]), environment: world.browserEnvironment(user: "ada"), timeout: 60)
        #expect(login.status == 0, "\(login.stderr)")
        #expect(
            login.stderr.contains("warning: could not note where this sign-in is kept")
                && login.stderr.contains("--storage kernel-keyring"),
            "\(login.stderr)")
        _ = try await world.authkit(["logout", "--group", group, "--storage", "kernel-keyring"])
    }

    @Test func aBlockedKeyctlExitsThree() async throws {
        let helper = try NoKeyctl.build()
        let result = try await ProcessRunner.run(
            helper, [TestPaths.product("authkit").path, "token", "--storage", "kernel-keyring", "--group", "com.example.x"],
            environment: ["HOME": NSTemporaryDirectory()], timeout: 30)
        #expect(result.status == 3, "\(result.status): \(result.stderr)")
        #expect(result.stderr.contains("kernel keyring cannot be used here") && result.stderr.contains("--storage"), "\(result.stderr)")
        #expect(result.stdout.isEmpty)
    }
}

extension TerminalSafetyTests {
    /// The stored record in the kernel keyring, rewritten as another process of the user could.
    static func tamperKernel(group: String, issuer: String, account: String = "ada@example.test", _ change: (inout [String: Any]) -> Void)
        throws
    {
        let probe = try PrivateSecretService.probeExecutable()
        let key = ["--group", group, "--issuer", issuer, "--client-id", CLIHarness.clientID, "--account", account]
        let lookup = try ProcessRunner.run(probe, ["--kernel-keyring", "--show-secret", "lookup"] + key, timeout: 30)
        let answer = try #require(try JSONSerialization.jsonObject(with: Data(lookup.stdout.utf8)) as? [String: Any])
        let secret = try #require((answer["item"] as? [String: Any])?["secret"] as? String, "\(lookup.stdout)")
        var record = try #require(try JSONSerialization.jsonObject(with: Data(secret.utf8)) as? [String: Any])
        change(&record)
        let text = String(decoding: try JSONSerialization.data(withJSONObject: record, options: [.sortedKeys]), as: UTF8.self)
        try #require(try ProcessRunner.run(probe, ["--kernel-keyring", "save"] + key, stdin: text, timeout: 30).status == 0)
    }
}
