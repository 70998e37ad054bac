import AuthKit
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `authkit agent`: the same answers as the store gives, from memory; never stale after the
/// store changed; nothing lost when it dies; only its own user served.
@Suite struct AgentCommandTests {
    /// A client that cannot reach the Secret Service at all: whatever it gets came from the agent.
    static let noBus = ["DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent/bus"]
    static let noAgent = ["AUTHKIT_AGENT": "off"]

    @Test func theAgentAnswersAsTheStoreWouldAndIsUsed() async throws {
        let world = try await CLIHarness.start(agent: true)
        defer { world.stop() }
        let token = ["token", "--group", world.group]
        // Not signed in: the same line and the same exit code, agent or not.
        let viaAgent = try await world.authkit(token)
        let direct = try await world.authkit(token, environment: Self.noAgent)
        #expect(viaAgent.status == 1 && direct.status == 1)
        #expect(viaAgent.stderr == direct.stderr, "\(viaAgent.stderr) vs \(direct.stderr)")

        try await world.signIn()
        let served = try await world.authkit(token, environment: Self.noBus)
        #expect(served.status == 0, "a client without a session bus gets the token from the agent: \(served.stderr)")
        #expect(served.stdout == (try await world.authkit(token, environment: Self.noAgent)).stdout)
        #expect(
            try await world.authkit(token, environment: Self.noBus.merging(Self.noAgent) { $1 }).status == 3,
            "without the agent it is the store's")

        let status = try await world.authkit(["status", "--group", world.group])
        #expect(
            status.status == 0 && status.stdout.contains("\n    served by:      the agent (tokens from memory), pid "), "\(status.stdout)")
        #expect(!(try await world.authkit(["status", "--group", world.group], environment: Self.noAgent)).stdout.contains("served by:"))
        // A full agent is no forward: without a bus, status keeps the store's own hint; and with
        // AUTHKIT_AGENT=off the socket is neither asked nor mentioned.
        for environment in [Self.noBus, Self.noBus.merging(Self.noAgent) { $1 }] {
            let unreachable = try await world.authkit(["status", "--group", world.group], environment: environment)
            #expect(
                unreachable.status == 3 && unreachable.stderr.contains("dbus-run-session") && !unreachable.stderr.contains("forward"),
                "\(unreachable.stderr)")
        }

        let idToken = try await world.authkit(["token", "--id-token", "--group", world.group], environment: Self.noBus)
        #expect(idToken.status == 0, "\(idToken.stderr)")
        #expect(
            idToken.stdout == (try await world.authkit(["token", "--id-token", "--group", world.group], environment: Self.noAgent)).stdout)

        let exec = try await world.authkit(
            [
                "exec", "--group", world.group, "--", "/bin/sh", "-c", #"test "$AUTHKIT_TOKEN" = "$1""#, "sh",
                String(served.stdout.dropLast()),
            ],
            environment: Self.noBus)
        // (The token on this test's own command line is never a run's output; the runs are scanned.)
        #expect(exec.status == 0, "exec through the agent: \(exec.stderr)")
        try await world.assertNoSecretsLeaked()
    }

    @Test(arguments: CLIHarness.Storage.allCases)
    func loginLogoutAndAnotherProgramsSignOutReachWhatTheAgentServes(storage: CLIHarness.Storage) async throws {
        let world = try await CLIHarness.start(storage: storage, agent: true)
        defer { world.stop() }
        let token = ["token", "--group", world.group]
        try await world.signIn()
        let first = try await world.authkit(token)
        #expect(first.status == 0, "\(first.stderr)")

        // `logout` tells the agent before it returns.
        #expect(try await world.authkit(["logout", "--group", world.group]).status == 0)
        let afterLogout = try await world.authkit(token)
        #expect(afterLogout.status == 1, "not served a moment after logout: \(afterLogout.stdout)\(afterLogout.stderr)")

        // A new `login` too: the new sign-in's token, at once.
        try await world.signIn()
        let second = try await world.authkit(token)
        #expect(second.status == 0 && second.stdout != first.stdout)
        #expect(second.stdout == (try await world.authkit(token, environment: Self.noAgent)).stdout)

        // Another program removes the sign-in without telling the agent.
        #expect(try await world.authkit(["logout", "--group", world.group], environment: Self.noAgent).status == 0)
        if storage == .secretService {
            // The Secret Service is read again at most a second later.
            try await Task.sleep(for: .milliseconds(1100))
        }
        let gone = try await world.authkit(token)
        #expect(gone.status == 1, "a removed sign-in is not served after a second (\(storage)): \(gone.stderr)")
        try await world.assertNoSecretsLeaked()
    }

    @Test func aKilledAgentCostsNothingAndANewOneReplacesItsStaleSocket() async throws {
        let world = try await CLIHarness.start(agent: true)
        defer { world.stop() }
        try await world.provider.configure(["access_token_ttl": 30])
        try await world.signIn()
        try await world.provider.configure(["access_token_ttl": 3600])
        // The agent's refresh waits on the key set; the agent dies meanwhile (SIGKILL: no
        // cleanup, its socket file stays).
        try await world.provider.setFault(.delay("jwks", milliseconds: 3000))
        let arguments = ["token", "--group", world.group, "--min-ttl", "120"]
        let client = try world.start(arguments)
        try await Task.sleep(for: .milliseconds(1000))
        await world.stopAgent(signal: SIGKILL)
        let result = try await world.finish(client, arguments)
        #expect(result.status == 0, "the client fell back to the store and refreshed itself: \(result.stderr)")
        #expect(FileManager.default.fileExists(atPath: world.agentSocket), "a dead agent's socket file stays")

        // A stale socket costs a client nothing; the sign-in is intact.
        let stale = try await world.authkit(arguments)
        #expect(stale.status == 0 && stale.stdout == result.stdout, "\(stale.stderr)")
        // A new agent takes over the stale socket (a live one it would refuse).
        try await world.startAgent()
        let again = try await world.authkit(arguments, environment: Self.noBus)
        #expect(again.status == 0 && again.stdout == result.stdout, "\(again.stderr)")
        let second = try await world.authkit(["agent", "run", "--socket", world.agentSocket], timeout: 20)
        #expect(second.status == 2 && second.stderr.contains("an agent already serves"), "\(second.stderr)")
        try await world.assertNoSecretsLeaked()
    }

    @Test func aThousandConcurrentRequestsOnAnExpiredTokenMakeOneRefresh() async throws {
        let world = try await CLIHarness.start(agent: true)
        defer { world.stop() }
        try await world.provider.configure(["access_token_ttl": 30])
        try await world.signIn()
        try await world.provider.configure(["access_token_ttl": 3600])
        try await world.provider.clearLog()
        try await world.provider.setFault(.delay("token", milliseconds: 500))
        let client = AgentClient(path: world.agentSocket)
        let request = AgentRequest.token(AgentTokenRequest(group: world.group, storage: .secretService, minTTL: 120))
        let answers = await withTaskGroup(of: AgentClient.Outcome.self) { group in
            for _ in 0..<1000 { group.addTask { await client.send(request) } }
            return await group.reduce(into: []) { $0.append($1) }
        }
        var tokens = Set<String>()
        var failures: [String] = []
        for answer in answers {
            switch answer {
            case .answer(let response) where response.ok: tokens.insert(response.token ?? "")
            case .answer(let response): failures.append(response.error?.message ?? "?")
            case .unavailable(let reason): failures.append(reason)
            }
        }
        #expect(failures.isEmpty, "\(failures.count) failed, e.g. \(failures.first ?? "")")
        #expect(tokens.count == 1, "every answer carries the one refreshed token")
        #expect(try await world.provider.log().count(grantType: "refresh_token") == 1, "exactly one refresh")
        let issued = Set(
            try await world.provider.issued()["items"].array.filter { $0["kind"] == "access_token" }.compactMap { $0["value"].string })
        #expect(tokens.isSubset(of: issued))
    }

    @Test func anotherUserIsRefusedAndAClientNeverUsesAnotherUsersAgent() async throws {
        if let reason = UnprivilegedUser.unavailableReason {
            Issue.record(Comment(rawValue: "cannot check the peer uid: \(reason)"))
            return
        }
        let world = try await CLIHarness.start()
        defer { world.stop() }
        try await world.signIn()
        // A socket the other user can reach (the agent would make it 0600 in a 0700 folder).
        let shared = try TestPaths.makeTemporaryDirectory(prefix: "authkit-agent")
        defer { try? FileManager.default.removeItem(at: shared) }
        chmod(shared.path, 0o755)
        let socket = shared.path + "/agent.sock"
        let agent = try TestProcess(TestPaths.product("authkit"), ["agent", "run", "--socket", socket], environment: world.environment)
        defer {
            agent.send(signal: SIGTERM)
            agent.wait(timeout: 10)
        }
        try await until("the agent listens", timeout: .seconds(30)) { !agent.isRunning || agent.stderrSoFar.contains("agent listening") }
        chmod(socket, 0o666)

        let home = try UnprivilegedUser.makeHome()
        defer { try? FileManager.default.removeItem(at: home.deletingLastPathComponent()) }
        let environment = [
            "HOME": home.path, "PATH": "/usr/bin:/bin", "AUTHKIT_AGENT_SOCK": socket, "AUTHKIT_LOG": "debug",
            "AUTHKIT_STORAGE": "kernel-keyring",
        ]
        let status = try await offThePool {
            try UnprivilegedUser.run(TestPaths.product("authkit"), ["agent", "status", "--socket", socket], environment: environment)
        }
        #expect(status.status == 1, "the agent closes another user's connection: \(status.stdout)\(status.stderr)")
        try await until("the agent logs the refusal", timeout: .seconds(10)) {
            agent.stderrSoFar.contains("refused a connection from another user")
        }
        let token = try await offThePool {
            try UnprivilegedUser.run(TestPaths.product("authkit"), ["token", "--group", world.group], environment: environment)
        }
        #expect(token.status == 1 && token.stdout.isEmpty, "the other user gets nothing of ours: \(token.stderr)")
        world.recordExternal("authkit", ["token", "--group", world.group], token)
        world.recordExternal("authkit", ["agent", "status"], status)
        try await world.assertNoSecretsLeaked()
    }

    /// Without a runtime directory (no systemd user session): `agent start` twice is one agent,
    /// `agent stop` stops it, says `unset` only to an `eval`, and leaves no folder behind.
    @Test func agentStartAndStopWithoutSystemdAreIdempotentAndClean() async throws {
        let world = try await CLIHarness.start()
        defer { world.stop() }
        let tmp = world.scratch.appendingPathComponent("tmp").path
        try FileManager.default.createDirectory(atPath: tmp, withIntermediateDirectories: true)
        var environment = world.environment
        environment["XDG_RUNTIME_DIR"] = ""
        environment["TMPDIR"] = tmp
        let env = environment.merging(["AUTHKIT_AGENT_SOCK": ""]) { $1 }
        let first = try await world.authkit(["agent", "start"], environment: env)
        #expect(first.status == 0, "\(first.stderr)")
        let second = try await world.authkit(["agent", "start"], environment: env)
        #expect(second.status == 0 && second.stderr.contains("already serves"), "\(second.stderr)")
        let socket = try #require(first.stdout.split(separator: "\n").first?.split(separator: ";").first?.split(separator: "=").last)
            .trimmingCharacters(in: CharacterSet(charactersIn: "'"))
        #expect(second.stdout == first.stdout, "the same agent: \(second.stdout)")
        #expect(socket.hasPrefix(tmp + "/authkit-"), "\(socket)")
        let stopped = try await world.authkit(["agent", "stop", "--socket", socket], environment: env)
        #expect(stopped.status == 0 && stopped.stdout == "unset AUTHKIT_AGENT_SOCK;\n", "\(stopped.stdout)\(stopped.stderr)")
        let folder = String(socket[..<(socket.lastIndex(of: "/") ?? socket.endIndex)])
        #expect(!FileManager.default.fileExists(atPath: folder), "the private folder went with the agent")
        let again = try await world.authkit(["agent", "stop", "--socket", socket], environment: env)
        #expect(again.status == 0 && again.stderr.contains("no agent is running"), "\(again.stderr)")
    }

    @Test func setupAgentWritesSystemdUnitsAndTheActivatedAgentServes() async throws {
        let world = try await CLIHarness.start()
        defer { world.stop() }
        let printed = try await world.authkit(["setup", "agent", "--print"])
        #expect(printed.status == 0 && printed.stdout.contains("ListenStream=%t/authkit/agent.sock"), "\(printed.stdout)\(printed.stderr)")
        #expect(printed.stdout.contains("ExecStart=\(TestPaths.product("authkit").path) agent run"))
        // Without a systemd user session: refused, and nothing left written for --list to count.
        let failed = try await world.authkit(
            ["setup", "agent"],
            environment: ["DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent", "XDG_RUNTIME_DIR": world.scratch.path + "/no-runtime"])
        let unitsBefore = URL(fileURLWithPath: world.environment["XDG_CONFIG_HOME"] ?? "/nonexistent").appendingPathComponent(
            "systemd/user")
        #expect(failed.status == 2 && failed.stderr.contains("systemctl"), "\(failed.stderr)")
        #expect(
            !FileManager.default.fileExists(atPath: unitsBefore.appendingPathComponent("authkit-agent.socket").path), "no unit left behind")
        #expect(!FileManager.default.fileExists(atPath: unitsBefore.path), "no folder left behind either")
        #expect(failed.stderr.contains("nothing was written") && failed.stderr.contains("authkit agent start"), "\(failed.stderr)")
        #expect(!(try await world.authkit(["setup", "--list"]).stdout.contains("agent    set up")))
        let written = try await world.authkit(["setup", "agent", "--no-start"])
        #expect(written.status == 0, "\(written.stderr)")
        let units = URL(fileURLWithPath: world.environment["XDG_CONFIG_HOME"] ?? "/nonexistent").appendingPathComponent("systemd/user")
        for name in ["authkit-agent.socket", "authkit-agent.service"] {
            #expect(FileManager.default.fileExists(atPath: units.appendingPathComponent(name).path), "\(name) written")
        }
        // Written, not enabled: not set up yet, and the line says how to finish.
        let listed = try await world.authkit(["setup", "--list"]).stdout
        #expect(listed.contains("agent    not set up (the units are written but not enabled: systemctl --user enable"), "\(listed)")
        // What `systemctl --user enable` makes (no user manager runs here to ask).
        let wants = units.appendingPathComponent("sockets.target.wants")
        try FileManager.default.createDirectory(at: wants, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(
            atPath: wants.appendingPathComponent("authkit-agent.socket").path, withDestinationPath: "../authkit-agent.socket")
        #expect(try await world.authkit(["setup", "--list"]).stdout.contains("agent    set up"))

        // Socket activation as systemd does it: something else listens, and starts
        // `authkit agent run` with the listening socket as descriptor 3 on the first request.
        try await world.signIn()
        let socket = world.scratch.path + "/activated.sock"
        let activator = try TestProcess(
            URL(fileURLWithPath: "/usr/bin/systemd-socket-activate"),
            [
                "-l", socket, "-E", "DBUS_SESSION_BUS_ADDRESS", "-E", "HOME", "-E", "XDG_RUNTIME_DIR", "-E", "XDG_CONFIG_HOME",
                "-E", "XDG_DATA_HOME", "-E", "XDG_STATE_HOME", TestPaths.product("authkit").path, "agent", "run",
            ],
            environment: world.environment)
        defer {
            activator.send(signal: SIGTERM)
            activator.wait(timeout: 10)
        }
        try await until("systemd-socket-activate listens", timeout: .seconds(30)) {
            !activator.isRunning || activator.stderrSoFar.contains("Listening on")
        }
        let token = try await world.authkit(
            ["token", "--group", world.group], environment: Self.noBus.merging(["AUTHKIT_AGENT_SOCK": socket]) { $1 })
        #expect(token.status == 0, "the socket-activated agent serves: \(token.stderr) \(activator.stderrSoFar)")
        #expect(activator.stderrSoFar.contains("socket=\(socket)"), "it serves systemd's socket: \(activator.stderrSoFar)")
        try await world.assertNoSecretsLeaked()
    }
}
