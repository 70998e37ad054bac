import AuthKitCore
import Foundation
import TestSupport
import Testing

/// `authkit exec` through the lean client: the same token in the same variable, the command in
/// its place with the signal state and descriptors authkit's exec gives it, the program named
/// to the agent; everything else handed over.
extension LeanClientTests {
    @Test func execRunsTheCommandAsAuthkitRunsIt() async throws {
        let (lean, world) = try await Self.signedInWorld()
        defer { world.stop() }
        let alone = try Self.copy(lean, to: "alone", in: world)
        let group = ["--group", world.group]
        // (The child prints a digest of the token, never the token.)
        let digest = #"printf %s "$0" | sha256sum"#
        let token = try await world.authkit(["token"] + group)
        let sum = try await ProcessRunner.run(
            URL(fileURLWithPath: "/bin/sh"), ["-c", digest, String(token.stdout.dropLast())], environment: world.environment, timeout: 30)
        // A file of the command's name on PATH that cannot run: 126, as a shell says.
        let folder = world.scratch.appendingPathComponent("path")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        FileManager.default.createFile(
            atPath: folder.path + "/not-runnable", contents: Data("x".utf8), attributes: [.posixPermissions: 0o644])
        let onPath = ["PATH": folder.path + ":" + (world.environment["PATH"] ?? "/usr/bin:/bin")]
        let served: [([String], [String: String])] = [
            (["exec"] + group + ["--", "not-runnable"], onPath),
            (["exec"] + group + ["--", "sh", "-c", #"printf %s "$AUTHKIT_TOKEN" | sha256sum"#], [:]),
            (["exec", "--env", "GH_TOKEN"] + group + ["--min-ttl", "600", "--", "sh", "-c", #"printf %s "$GH_TOKEN" | sha256sum"#], [:]),
            (["exec", "--env=GH_TOKEN"] + group + ["--", "/bin/sh", "-c", #"printf %s "$GH_TOKEN" | sha256sum"#], [:]),
            // Without an agent, from the Secret Service.
            (["exec"] + group + ["--", "sh", "-c", #"printf %s "$AUTHKIT_TOKEN" | sha256sum"#], ["AUTHKIT_AGENT": "off"]),
            // The command's exit status, and authkit's words for a command that cannot run.
            (["exec"] + group + ["--", "sh", "-c", "exit 7"], [:]), (["exec"] + group + ["--", "/nonexistent/cmd"], [:]),
            (["exec"] + group + ["--", "no-such-command-anywhere"], [:]), (["exec"] + group + ["--", "/etc/hostname"], [:]),
        ]
        for (arguments, environment) in served {
            let expected = try await world.authkit(arguments, environment: environment)
            let got = try await world.lean(arguments, copy: alone, environment: environment)
            let title = arguments.joined(separator: " ") + " \(environment)"
            #expect(
                got.status == expected.status && got.stdout == expected.stdout && got.stderr == expected.stderr,
                "\(title): \(got.status) \(got.stdout) \(got.stderr)")
            if arguments.contains("--env") || arguments.contains("--env=GH_TOKEN") || arguments.last?.contains("AUTHKIT_TOKEN") == true {
                #expect(got.stdout == sum.stdout, "\(title): the token's digest")
            }
        }
        // The command starts with no signal blocked or ignored, with the parent's descriptors
        // only (5, open in the parent; none of the lean client's, none of libsecret's without an
        // agent) and the parent's environment but the token's variable (nothing authkit set).
        for environment in [[:], ["AUTHKIT_AGENT": "off"]] {
            var states: [String] = []
            for program in [TestPaths.product("authkit"), alone] {
                let result = try await Self.execState(
                    program, group: world.group, environment: world.environment.merging(environment) { $1 })
                world.recordExternal(program.lastPathComponent, ["exec"], result)
                let title = "\(program.lastPathComponent) \(environment)"
                Self.expectCleanStart(result, title)
                states.append(result.stdout)
            }
            let (full, lean) = (states[0].split(separator: "\n"), states[1].split(separator: "\n"))
            #expect(
                full == lean,
                "\(environment): authkit only \(full.filter { !lean.contains($0) }), lean only \(lean.filter { !full.contains($0) })")
        }
        // The agent names the program the token is for, as for authkit's exec.
        let named = try await world.lean(["exec"] + group + ["--", "true"])
        #expect(named.status == 0, "\(named.stderr)")
        let events = try await Self.events(world, group: world.group)
        let truePath = try #require(ExecRules.programPath("true", path: world.environment["PATH"]))
        #expect(events.last?.contains(#""executable":"\#(truePath)""#) == true, "\(events.last ?? "")")
        // Handed to authkit: its words and exit code.
        for arguments in [
            ["exec", "--group", world.group, "true"], ["exec", "--env", "LD_PRELOAD", "--", "true"], ["exec", "--env", "1X", "--", "true"],
            ["exec", "--bogus", "--", "true"], ["exec", "--"], ["exec", "--group", "com.example.nobody", "--", "true"],
            ["exec", "--env", "A", "--env", "B", "--", "true"], ["exec", "--help"],
        ] {
            try await Self.expectHandedOver(arguments, alone: alone, in: world)
        }
        // A refusal is handed over with the command, and authkit does not ask the agent again.
        let nobody = ["exec", "--group", "com.example.nobody", "--", "true"]
        let before = try await Self.events(world, group: "com.example.nobody")
        let refused = try await world.lean(nobody)
        #expect(refused.status == 1 && refused.stderr.contains("com.example.nobody"), "\(refused.stderr)")
        let after = try await Self.events(world, group: "com.example.nobody")
        #expect(after.count == before.count + 1, "the agent was asked \(after.count - before.count) times: \(after)")
        #expect(try await world.assertNoSecretsLeaked() > 0)
    }

    /// `program exec --group GROUP -- sh …` run by a parent that blocks SIGUSR1, ignores SIGINT
    /// and SIGHUP and holds descriptor 5 open: the command prints its signal state, its
    /// descriptors and its environment but the token's variable.
    static func execState(_ program: URL, group: String, environment: [String: String]) async throws -> ProcessResult {
        let parent = """
            import os, signal, sys
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            signal.signal(signal.SIGHUP, signal.SIG_IGN)
            fd = os.open("/dev/null", os.O_RDONLY)
            os.dup2(fd, 5, inheritable=True)
            os.execv(sys.argv[1], sys.argv[1:])
            """
        let command = #"grep -E "^Sig(Blk|Ign)" /proc/self/status; ls /proc/self/fd; env | grep -v "^AUTHKIT_TOKEN=" | sort"#
        return try await ProcessRunner.run(
            TestPaths.python, ["-c", parent, program.path, "exec", "--group", group, "--", "sh", "-c", command], environment: environment,
            timeout: 30)
    }

    /// Handed to authkit after the lean client read the store (its token due for a refresh):
    /// the command still gets the parent's descriptors only, and the same signal state.
    @Test func execHandedOverAfterAStoreReadStartsTheCommandClean() async throws {
        _ = try await offThePool { try LeanClient.build() }
        let world = try await CLIHarness.start()
        defer { world.stop() }
        try await world.provider.configure(["access_token_ttl": 30])
        try await world.signIn()
        try await world.provider.configure(["access_token_ttl": 3600])
        try await world.provider.clearLog()
        // (The lean client beside authkit, as installed.)
        let result = try await Self.execState(TestPaths.product("authkit-lean"), group: world.group, environment: world.environment)
        world.recordExternal("authkit-lean", ["exec"], result)
        #expect(
            try await world.provider.log().count(grantType: "refresh_token") == 1, "authkit refreshed the token the lean client left it")
        Self.expectCleanStart(result, "handed over")
        try await world.assertNoSecretsLeaked()
    }

    /// What ``execState(_:group:environment:)`` printed: no signal blocked or ignored, the
    /// parent's descriptors only (and `ls`'s own, 3).
    static func expectCleanStart(_ result: ProcessResult, _ title: String) {
        let masks = result.stdout.split(separator: "\n").filter { $0.hasPrefix("Sig") }.map {
            UInt64($0.split(separator: "\t").last ?? "", radix: 16)
        }
        #expect(result.status == 0 && masks.count == 2 && masks.allSatisfy { $0 == 0 }, "\(title): \(result.stdout) \(result.stderr)")
        let descriptors = result.stdout.split(separator: "\n").filter { $0.allSatisfy(\.isNumber) }
        #expect(descriptors == ["0", "1", "2", "3", "5"], "\(title): \(descriptors)")
    }
}
