import AuthKit
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A restricted (forwarded) agent socket: in a bubblewrap sandbox with no D-Bus, no keyring and
/// no home, and through OpenSSH to another account — access tokens of the listed group only,
/// never a refresh token, gone with the session.
@Suite struct AgentForwardTests {
    /// Starts `authkit agent forward` for the world's group and returns it with its socket.
    /// `git clone` of the git server's repository in the sandbox, with the authkit helper and a
    /// `[credential]` mapping of the sandbox's own to the world's group.
    static func sandboxedClone(_ git: GitCredentialTests.GitWorld, world: CLIHarness, socket: String) async throws -> ProcessResult {
        let config = world.scratch.appendingPathComponent("sandbox-config")
        try FileManager.default.createDirectory(at: config.appendingPathComponent("authkit"), withIntermediateDirectories: true)
        try "[credential \"\(git.url)\"]\ngroup = \(world.group)\n".write(
            to: config.appendingPathComponent("authkit/config"), atomically: false, encoding: .utf8)
        return try await offThePool {
            try Self.sandboxed(
                ["git", "-c", "credential.helper=!authkit credential git", "clone", "-q", git.url + "/repo.git", "/tmp/clone"],
                socket: socket, config: config)
        }
    }

    static func forward(_ world: CLIHarness, _ extra: [String] = []) async throws -> (TestProcess, String) {
        let socket = world.scratch.path + "/forward.sock"
        let process = try TestProcess(
            TestPaths.product("authkit"), ["agent", "forward", "--group", world.group, "--socket", socket] + extra,
            environment: world.environment)
        let printed = try await offThePool { process.firstStdoutLine(timeout: 30) }
        try #require(printed == socket, "forward printed \(printed ?? "nothing"): \(process.stderrSoFar)")
        return (process, socket)
    }

    /// `authkit ARGUMENTS` inside bubblewrap: the whole file system read-only, but /tmp, /run,
    /// /root and /home empty (no D-Bus socket, no keyring, no home), a clean environment, and
    /// only the forwarded socket at /run/authkit/agent.sock (nil: nothing there, as after the
    /// forward ended).
    /// `userNamespace: false` keeps the user's own user namespace (as a container of the same
    /// uid without one does), where the kernel's persistent keyring is the user's.
    static func sandboxed(_ command: [String], socket: String?, config: URL? = nil, filter: URL? = nil, userNamespace: Bool = true) throws
        -> ProcessResult
    {
        var arguments = [
            "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
            "--tmpfs", "/tmp", "--tmpfs", "/run", "--tmpfs", "/root", "--tmpfs", "/home",
            "--ro-bind", TestPaths.product("authkit").path, "/run/bin/authkit",
            "--unshare-all", "--share-net", "--die-with-parent", "--clearenv",
            "--setenv", "AUTHKIT_AGENT_SOCK", "/run/authkit/agent.sock", "--setenv", "HOME", "/root",
            "--setenv", "PATH", "/run/bin:/usr/bin:/bin", "--setenv", "GIT_TERMINAL_PROMPT", "0",
        ]
        if !userNamespace {
            arguments =
                arguments.map { $0 == "--unshare-all" ? "--unshare-pid" : $0 } + ["--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
        }
        if let socket { arguments += ["--bind", socket, "/run/authkit/agent.sock"] }
        if let config { arguments += ["--ro-bind", config.path, "/run/config", "--setenv", "XDG_CONFIG_HOME", "/run/config"] }
        guard let filter else {
            return try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/bwrap"), arguments + command, environment: [:], timeout: 60)
        }
        // The docs' recipe: a session keyring of its own, keyctl and add_key denied.
        return try ProcessRunner.run(
            URL(fileURLWithPath: "/usr/bin/keyctl"),
            ["session", "-", "/bin/sh", "-c", #"f=$1; shift; exec bwrap --seccomp 9 "$@" 9<"$f""#, "sh", filter.path] + arguments + command,
            environment: [:], timeout: 60)
    }

    @Test func confirmNeedsATerminalAndSSHLeavesItToAForwardOfItsOwn() async throws {
        let world = try await CLIHarness.start()
        defer { world.stop() }
        // The test's children have no controlling terminal (their own process group, no tty).
        let forward = try await world.authkit([
            "agent", "forward", "--confirm", "--group", world.group, "--socket", world.scratch.path + "/f.sock",
        ])
        #expect(forward.status == 2 && forward.stderr.contains("--confirm needs a terminal"), "\(forward.stderr)")
        let ssh = try await world.authkit(["ssh", "--confirm", "--", "me@example.invalid"])
        #expect(ssh.status == 2 && ssh.stderr.contains("--confirm needs the terminal, which ssh uses"), "\(ssh.stderr)")
    }

    /// A served group nobody is signed in to here is said on this side, before serving, with
    /// the login that fixes it: on the other side it would only fail.
    @Test func aServedGroupNobodyIsSignedInToIsSaidBeforeServing() async throws {
        let world = try await CLIHarness.start()
        defer { world.stop() }
        try await world.signIn()
        let nobody = "com.example.nobody-\(UInt32.random(in: 0...UInt32.max))"
        let (forward, _) = try await Self.forward(world, ["--group", nobody])
        // Everything it wrote, read once it has ended (its pipe is read apart from its stdout).
        forward.send(signal: SIGTERM)
        let said = try await offThePool { forward.finish(timeout: 10) }.stderr
        #expect(
            said.contains("nobody is signed in in the group \(nobody) here") && said.contains("authkit login --group \(nobody)"), "\(said)")
        #expect(!said.contains("group \(world.group) here"), "the signed-in group is not warned about: \(said)")
    }

    /// A foreground forward belongs to its terminal: closing it (SIGHUP) ends the forward as
    /// Ctrl-C does, and takes the socket with it.
    /// A provider whose access tokens live 300 s (Keycloak's default) and clients behind a
    /// forward that ask `--min-ttl 300`, the forward's cap: one refresh, not one per request.
    @Test func aForwardsClientsCannotRefreshOnEveryRequest() async throws {
        let world = try await CLIHarness.start()
        defer { world.stop() }
        try await world.provider.configure(["access_token_ttl": 300])
        try await world.signIn()
        let (forward, socket) = try await Self.forward(world)
        defer {
            forward.send(signal: SIGTERM)
            forward.wait(timeout: 10)
        }
        try await world.provider.clearLog()
        for _ in 0..<6 {
            let token = try await world.authkit(
                ["token", "--group", world.group, "--min-ttl", "300", "--allow-shorter"], environment: ["AUTHKIT_AGENT_SOCK": socket])
            #expect(token.status == 0, "\(token.stderr)")
        }
        #expect(try await world.provider.log().grantTypes["refresh_token", default: 0] <= 1)
        try await world.assertNoSecretsLeaked()
    }

    /// A sandbox of the same user in the user's own user namespace (a container of the same uid
    /// without one) reads the kernel keyring — here a kernel-keyring sign-in's refresh token, by
    /// asking for the persistent keyring — unless it runs as docs/agent.md says: a session keyring of its own and `authkit agent sandbox-filter` for bubblewrap's
    /// --seccomp. Then keyctl fails there, and the forwarded socket still hands out the token.
    @Test func theSandboxRecipeKeepsTheKernelKeyringOut() async throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/bwrap") else {
            Issue.record("bubblewrap is missing: run ./scripts/bootstrap")
            return
        }
        let group = "com.example.kernel-\(UInt32.random(in: 0...UInt32.max))"
        let world = try await CLIHarness.start(group: group, storage: .kernelKeyring)
        defer { world.stop() }
        let login = try await world.authkit(
            world.loginArguments(["--storage", "kernel-keyring"]), environment: world.browserEnvironment(user: "ada"), timeout: 60)
        #expect(login.status == 0, "\(login.stderr)")
        defer { Task { _ = try? await world.authkit(["logout", "--group", group, "--storage", "kernel-keyring"]) } }
        let (forward, socket) = try await Self.forward(world)
        defer {
            forward.send(signal: SIGTERM)
            forward.wait(timeout: 10)
        }
        let filterFile = world.scratch.appendingPathComponent("no-keyring.bpf")
        let made = try await offThePool {
            try ProcessRunner.run(
                URL(fileURLWithPath: "/bin/sh"),
                ["-c", "exec \"$0\" agent sandbox-filter > \"$1\"", TestPaths.product("authkit").path, filterFile.path],
                timeout: 30)
        }
        #expect(made.status == 0, "\(made.stderr)")
        // keyctl reaching the persistent keyring, the group's keyring and its key, as a thief would.
        let steal = [
            "keyctl", "session", "-", "sh", "-c",
            "p=$(keyctl get_persistent @s) && r=$(keyctl search $p keyring authkit:\(group)) && keyctl pipe $(keyctl rlist $r)",
        ]
        let open = try await offThePool { try Self.sandboxed(steal, socket: socket, userNamespace: false) }
        #expect(open.status == 0 && open.stdout.contains("refresh_token"), "without the recipe the sandbox reads it: \(open.stderr)")
        world.recordExternal("sandbox", [], ProcessResult(status: 0, stdout: "", stderr: "", timedOut: false))
        let closed = try await offThePool { try Self.sandboxed(steal, socket: socket, filter: filterFile, userNamespace: false) }
        #expect(closed.status != 0 && !closed.stdout.contains("refresh_token"), "\(closed.stdout)")
        #expect(closed.stderr.contains("Operation not permitted"), "\(closed.stderr)")
        let token = try await offThePool {
            try Self.sandboxed(["authkit", "token", "--group", group], socket: socket, filter: filterFile, userNamespace: false)
        }
        world.recordExternal("authkit", ["token", "--group", group], token)
        #expect(token.status == 0 && !token.stdout.isEmpty, "the forward still serves: \(token.stderr)")
        try await world.assertNoSecretsLeaked()
    }

    /// An AI agent's sandbox gets a token for one API and nothing wider: the forward narrows
    /// every token to its resource (RFC 8707), the git server (which takes only tokens for it)
    /// lets the sandbox clone, and a wider request is refused before the provider is asked.
    @Test func aNarrowForwardHandsOutOnlyTokensForItsResource() async throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/bwrap") else {
            Issue.record("bubblewrap is missing: run ./scripts/bootstrap")
            return
        }
        let resource = "https://git.example.test/"
        let git = try await GitCredentialTests.GitWorld.start(resource: resource)
        defer { git.stop() }
        let world = git.world
        let (forward, socket) = try await Self.forward(world, ["--resource", resource, "--for", "1h"])
        defer {
            forward.send(signal: SIGTERM)
            forward.wait(timeout: 10)
        }
        let clone = try await Self.sandboxedClone(git, world: world, socket: socket)
        world.recordExternal("git", ["clone"], clone)
        #expect(clone.status == 0, "the sandbox clones with the narrowed token: \(clone.stderr)")

        let token = try await offThePool { try Self.sandboxed(["authkit", "token"], socket: socket) }
        world.recordExternal("authkit", ["token"], token)
        let value = token.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let issued = try await world.provider.issued()["items"].array.first { $0["value"].string == value }
        #expect(issued?["resources"].array.compactMap(\.string) == [resource], "\(String(describing: issued))")

        let before = try await world.provider.log().count(grantType: "refresh_token")
        for wider in [["authkit", "token", "--resource", "https://other.example.test/"], ["authkit", "token", "--scope", "email"]] {
            let refused = try await offThePool { try Self.sandboxed(wider, socket: socket) }
            world.recordExternal("authkit", Array(wider.dropFirst()), refused)
            #expect(
                refused.status != 0 && refused.stdout.isEmpty && refused.stderr.contains("forwarded agent socket"),
                "\(wider): \(refused.stderr)")
        }
        #expect(try await world.provider.log().count(grantType: "refresh_token") == before, "the provider was not asked for anything wider")
        try await world.assertNoSecretsLeaked()
    }

    @Test func closingItsTerminalEndsAForward() async throws {
        let world = try await CLIHarness.start()
        defer { world.stop() }
        let (forward, socket) = try await Self.forward(world)
        forward.send(signal: SIGHUP)
        let ended = try await offThePool { forward.finish(timeout: 10) }
        #expect(!ended.timedOut && ended.status == 0, "the forward ends on SIGHUP: \(ended.stderr)")
        #expect(!FileManager.default.fileExists(atPath: socket), "the forward removes its socket")
    }

    @Test func aSandboxGetsTheListedGroupsAccessTokensAndNothingElse() async throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/bwrap") else {
            Issue.record("bubblewrap is missing: run ./scripts/bootstrap")
            return
        }
        let git = try await GitCredentialTests.GitWorld.start()
        defer { git.stop() }
        let world = git.world
        let (forward, socket) = try await Self.forward(world)
        defer {
            forward.send(signal: SIGTERM)
            forward.wait(timeout: 10)
        }
        let hostToken = try await world.authkit(["token", "--group", world.group])
        #expect(hostToken.status == 0)

        let token = ["authkit", "token", "--group", world.group]
        let inside = try await offThePool { try Self.sandboxed(token, socket: socket) }
        world.recordExternal("authkit", Array(token.dropFirst()), inside)
        #expect(inside.status == 0 && inside.stdout == hostToken.stdout, "the sandbox gets the access token: \(inside.stderr)")
        // No group named in the sandbox: the forward's one group.
        let unnamed = try await offThePool { try Self.sandboxed(["authkit", "token"], socket: socket) }
        world.recordExternal("authkit", ["token"], unnamed)
        #expect(unnamed.status == 0 && unnamed.stdout == hostToken.stdout, "no --group: the forward's group: \(unnamed.stderr)")

        // git in the sandbox, with the authkit helper and a mapping of its own.
        let clone = try await Self.sandboxedClone(git, world: world, socket: socket)
        world.recordExternal("git", ["clone"], clone)
        #expect(clone.status == 0, "git clones in the sandbox through the forwarded socket: \(clone.stderr)")

        // Refused: another group, another scope, an id_token; and what would change the sign-in.
        for refused in [
            ["authkit", "token", "--group", "com.example.other"], ["authkit", "token", "--group", world.group, "--scope", "email"],
            ["authkit", "token", "--group", world.group, "--id-token"],
        ] {
            let result = try await offThePool { try Self.sandboxed(refused, socket: socket) }
            world.recordExternal("authkit", Array(refused.dropFirst()), result)
            #expect(result.status == 10 && result.stdout.isEmpty, "\(refused): \(result.stdout)\(result.stderr)")
            #expect(result.stderr.contains("forwarded agent socket does not"), "\(result.stderr)")
        }
        // Status and sign-out are the sign-in's machine's: the sandbox is told so, not how to
        // start a D-Bus session.
        for (command, refusal) in [("logout", "which does not sign out"), ("status", "which does not tell a sign-in's status")] {
            let result = try await offThePool { try Self.sandboxed(["authkit", command, "--group", world.group], socket: socket) }
            world.recordExternal("authkit", [command], result)
            #expect(result.status == 3 && result.stdout.isEmpty, "no store in the sandbox: \(result.stdout)\(result.stderr)")
            #expect(
                result.stderr.hasPrefix(
                    "authkit: this session gets access tokens from a forwarded agent socket (/run/authkit/agent.sock), \(refusal)")
                    && result.stderr.contains("run `authkit \(command)` on the machine that forwarded it"),
                "the forward's words lead: \(result.stderr)")
            #expect(!result.stderr.contains("D-Bus"), "nothing of the store this session never had: \(result.stderr)")
        }
        #expect(try await world.authkit(["token", "--group", world.group]).stdout == hostToken.stdout, "the sign-in is untouched")

        // The protocol itself: every operation, and one that does not exist, on the forwarded
        // socket. Nothing answers with a refresh token or an id_token.
        let client = AgentClient(path: socket)
        var answers: [String] = []
        for request in [
            AgentRequest.hello, .token(AgentTokenRequest(group: world.group)), .idToken(AgentTokenRequest(group: world.group)),
            .forget(group: world.group), .stop, .rejected(group: world.group, storage: nil, token: "x"),
        ] {
            guard case .answer(let response) = await client.send(request) else {
                Issue.record("no answer to \(request.operation)")
                continue
            }
            answers.append(String(decoding: AgentMessage.encode(response), as: UTF8.self))
            if [.forget, .stop, .idToken].contains(request.operation) { #expect(response.error?.code == .refused) }
        }
        let raw = try await offThePool {
            try ProcessRunner.run(
                URL(fileURLWithPath: "/usr/bin/python3"),
                [
                    "-c",
                    "import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.sendall(b'{\"v\":1,\"op\":\"refresh_token\",\"group\":\"'+sys.argv[2].encode()+b'\"}\\n'); print(s.recv(65536).decode())",
                    socket, world.group,
                ],
                environment: [:], timeout: 30)
        }
        #expect(raw.stdout.contains("bad_request"), "\(raw.stdout)\(raw.stderr)")
        answers.append(raw.stdout)
        // Fifty requests sent at once, none of the answers read first: the agent takes one at a
        // time and closes a connection that sends the next before reading the last.
        let probe = TestPaths.packageRoot.appendingPathComponent("Tests/Peers/agent_pipelining_probe.py").path
        let pipelined = try await offThePool {
            try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/python3"), [probe, socket, world.group], environment: [:], timeout: 60)
        }
        #expect(pipelined.stdout == "True\n", "\(pipelined.stdout)\(pipelined.stderr)")
        let issued = try await world.provider.issued()["items"].array
        let refreshAndID = issued.filter { $0["kind"] == "refresh_token" || $0["kind"] == "id_token" }.compactMap { $0["value"].string }
        #expect(!refreshAndID.isEmpty)
        for secret in refreshAndID {
            #expect(!answers.contains { $0.contains(secret) }, "a forwarded socket handed out a refresh token or id_token")
        }

        // Closing the forward ends the access.
        forward.send(signal: SIGTERM)
        forward.wait(timeout: 10)
        #expect(!FileManager.default.fileExists(atPath: socket), "the forward removes its socket")
        guard case .unavailable = await client.send(.hello) else {
            Issue.record("a closed forward still answers")
            return
        }
        // The sandbox still names the socket: it hears that the forward has ended.
        for command in [token, ["authkit", "exec", "--group", world.group, "--", "true"]] {
            let after = try await offThePool { try Self.sandboxed(command, socket: nil) }
            world.recordExternal("authkit", Array(command.dropFirst()), after)
            #expect(after.status == 3 && after.stdout.isEmpty, "\(command): \(after.stdout)\(after.stderr)")
            #expect(
                after.stderr.hasPrefix("authkit: no agent answers at /run/authkit/agent.sock: the forward that made it has ended")
                    && after.stderr.contains("hint: open it again from the machine that holds the sign-in"),
                "\(command): \(after.stderr)")
        }
        try await world.assertNoSecretsLeaked()
    }
}

/// `authkit ssh` to another account through a real sshd.
@Suite struct AgentSSHTests {
    @Test func theRemoteAccountGetsTokensAndGitWorksForTheSessionOnly() async throws {
        if let reason = TestSSHServer.unavailableReason {
            Issue.record(Comment(rawValue: "cannot run sshd: \(reason)"))
            return
        }
        let git = try await GitCredentialTests.GitWorld.start()
        defer { git.stop() }
        let world = git.world
        let server = try await offThePool { try TestSSHServer() }
        defer { server.stop() }
        // The remote account's own folder: its authkit mapping for the git server.
        let remote = try TestPaths.makeTemporaryDirectory(prefix: "authkit-remote")
        defer { try? FileManager.default.removeItem(at: remote) }
        chmod(remote.path, 0o755)
        let uid = getpwnam(TestSSHServer.user)?.pointee.pw_uid ?? 0
        let gid = getpwnam(TestSSHServer.user)?.pointee.pw_gid ?? 0
        let home = remote.appendingPathComponent("home")
        try FileManager.default.createDirectory(at: home.appendingPathComponent("config/authkit"), withIntermediateDirectories: true)
        try "[credential \"\(git.url)\"]\ngroup = \(world.group)\n".write(
            to: home.appendingPathComponent("config/authkit/config"), atomically: false, encoding: .utf8)
        for path in [home.path, home.path + "/config", home.path + "/config/authkit", home.path + "/config/authkit/config"] {
            chown(path, uid, gid)
        }
        chmod(home.path, 0o700)

        // The remote account runs authkit from a copy it can reach (the checkout may be private).
        let reachable = try ReachableCopy(of: TestPaths.product("authkit"))
        defer { reachable.remove() }
        let authkit = reachable.url.path
        let remoteEnvironment =
            "env -i PATH=/usr/bin:/bin HOME=\(home.path) XDG_CONFIG_HOME=\(home.path)/config AUTHKIT_AGENT_SOCK=\"$AUTHKIT_AGENT_SOCK\" AUTHKIT_FORWARD_KEY=\"$AUTHKIT_FORWARD_KEY\""
        func ssh(_ command: String, forward: Bool = true) async throws -> ProcessResult {
            let arguments =
                forward
                ? ["ssh", "--group", world.group, "--"] + server.clientOptions + [server.destination, command]
                : server.clientOptions + [server.destination, command]
            return try await offThePool {
                forward
                    ? try ProcessRunner.run(TestPaths.product("authkit"), arguments, environment: world.environment, timeout: 60)
                    : try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/ssh"), arguments, environment: world.environment, timeout: 60)
            }
        }

        let hostToken = try await world.authkit(["token", "--group", world.group])
        let token = try await ssh("\(remoteEnvironment) \(authkit) token --group \(world.group)")
        world.recordExternal("authkit", ["token", "--group", world.group], token)
        #expect(token.status == 0 && token.stdout == hostToken.stdout, "the remote account gets the laptop's token: \(token.stderr)")
        #expect(token.stderr.isEmpty, "nothing of the forward's own in the session's terminal: \(token.stderr)")

        let clone = try await ssh(
            "\(remoteEnvironment) GIT_CONFIG_NOSYSTEM=1 GIT_TERMINAL_PROMPT=0 git -c 'credential.helper=!\(authkit) credential git' "
                + "clone -q \(git.url)/repo.git \(home.path)/clone && test -f \(home.path)/clone/README && echo cloned")
        world.recordExternal("git", ["clone"], clone)
        #expect(clone.status == 0 && clone.stdout == "cloned\n", "git on the remote host clones: \(clone.stdout)\(clone.stderr)")

        let other = try await ssh("\(remoteEnvironment) \(authkit) token --group com.example.other")
        world.recordExternal("authkit", ["token", "--group", "com.example.other"], other)
        #expect(other.status == 10 && other.stderr.contains("does not serve the group"), "\(other.stderr)")

        // The forward ends with the session: its socket on the remote host is gone, and a
        // later session without it gets nothing.
        let path = try await ssh("echo \"$AUTHKIT_AGENT_SOCK\"")
        world.recordExternal("ssh", ["echo"], path)
        let remoteSocket = path.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(remoteSocket.hasPrefix("/tmp/authkit-agent-"), "\(path.stdout)\(path.stderr)")
        let after = try await ssh(
            "test -e \(remoteSocket) && echo present; export AUTHKIT_AGENT_SOCK=\(remoteSocket); \(remoteEnvironment) AUTHKIT_LOG=debug \(authkit) token --group \(world.group)",
            forward: false)
        world.recordExternal("authkit", ["token", "--group", world.group], after)
        #expect(!after.stdout.contains("present"), "the remote socket file is removed with the session")
        #expect(after.status != 0 && after.stdout.isEmpty, "nothing after the session: \(after.stderr)")
        #expect(after.stderr.contains("no agent at \(remoteSocket)"), "the client looked for the forward and found none: \(after.stderr)")
        try await world.assertNoSecretsLeaked()
    }

    /// An sshd whose StreamLocalBindMask lets every account open the forwarded socket: the
    /// session ends before the command runs, says why, and leaves no socket behind.
    @Test func aRemoteSocketOtherAccountsCouldOpenEndsTheSessionFirst() async throws {
        if let reason = TestSSHServer.unavailableReason {
            Issue.record(Comment(rawValue: "cannot run sshd: \(reason)"))
            return
        }
        let world = try await CLIHarness.start()
        defer { world.stop() }
        let server = try await offThePool { try TestSSHServer(streamLocalBindMask: "0000") }
        defer { server.stop() }
        let arguments = ["ssh", "--group", world.group, "--"] + server.clientOptions + [server.destination, "echo ran"]
        let session = try await offThePool {
            try ProcessRunner.run(TestPaths.product("authkit"), arguments, environment: world.environment, timeout: 60)
        }
        world.recordExternal("authkit", ["ssh", "echo ran"], session)
        #expect(session.status == 255 && session.stdout.isEmpty, "the command never runs: \(session.stdout)\(session.stderr)")
        #expect(
            session.stderr.contains("is open to other accounts there (sshd's StreamLocalBindMask made it wider than 0600)")
                && session.stderr.contains("hint: ask the remote host's administrator for StreamLocalBindMask 0177"), "\(session.stderr)")
        let named = session.stderr.firstMatch(of: /the forwarded socket (\/tmp\/authkit-agent-[^ ]+\.sock)/)?.1
        let socket = try #require(named.map(String.init), "the message names the socket: \(session.stderr)")
        let after = try await offThePool {
            try ProcessRunner.run(
                URL(fileURLWithPath: "/usr/bin/ssh"), server.clientOptions + [server.destination, "test -e \(socket) && echo present"],
                environment: world.environment, timeout: 60)
        }
        #expect(after.stdout.isEmpty, "the refused socket is removed: \(after.stdout)\(after.stderr)")
    }

    /// sshd made the forwarded socket open to every account (StreamLocalBindMask 0000): another
    /// account that connects in the moment before the remote side's check gets nothing — the
    /// forward serves only once that side, its check passed, opened it with the session's key.
    @Test func anotherAccountRacingTheCheckGetsNothing() async throws {
        if let reason = TestSSHServer.unavailableReason ?? UnprivilegedUser.unavailableReason {
            Issue.record(Comment(rawValue: "cannot run: \(reason)"))
            return
        }
        let world = try await CLIHarness.start()
        defer { world.stop() }
        try await world.signIn()
        let server = try await offThePool { try TestSSHServer(streamLocalBindMask: "0000") }
        defer { server.stop() }
        let racer = """
            import glob, json, socket, sys, time
            group, seen, deadline = sys.argv[1], set(), time.time() + float(sys.argv[2])
            print("ready", flush=True)
            while time.time() < deadline:
                for path in glob.glob("/tmp/authkit-agent-*.sock"):
                    try:
                        s = socket.socket(socket.AF_UNIX); s.settimeout(5); s.connect(path)
                        s.sendall(json.dumps({"v": 1, "op": "token", "group": group}).encode() + b"\\n")
                        answer = json.loads(s.makefile().readline() or "{}")
                        seen.add("served" if answer.get("ok") else (answer.get("error") or {}).get("code", "?"))
                    except OSError:
                        pass
                    except ValueError as error:
                        seen.add(type(error).__name__)
            print(json.dumps(sorted(seen)), flush=True)
            """
        let attacker = try TestProcess(
            URL(fileURLWithPath: "/usr/sbin/runuser"),
            ["-u", UnprivilegedUser.name, "--", "/usr/bin/python3", "-c", racer, world.group, "8"],
            environment: ["PATH": "/usr/bin:/bin"])
        #expect(try await offThePool { attacker.firstStdoutLine(timeout: 30) } == "ready")
        for _ in 0..<4 {
            let arguments = ["ssh", "--group", world.group, "--"] + server.clientOptions + [server.destination, "echo ran"]
            let session = try await offThePool {
                try ProcessRunner.run(TestPaths.product("authkit"), arguments, environment: world.environment, timeout: 60)
            }
            world.recordExternal("authkit", ["ssh", "echo ran"], session)
            #expect(session.status == 255 && !session.stdout.contains("ran"), "\(session.stderr)")
        }
        let report = try await offThePool { attacker.finish(timeout: 60) }
        #expect(!report.stdout.contains("served"), "another account got a token: \(report.stdout)")
        world.recordExternal("racer", [], report)
        try await world.assertNoSecretsLeaked()
    }
}
