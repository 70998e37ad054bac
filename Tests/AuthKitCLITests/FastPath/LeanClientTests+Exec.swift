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
        let served: [([String], [String: String])] = [
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
        // The command starts with no signal blocked or ignored, and with the parent's
        // descriptors only (5, open in the parent; none of the lean client's).
        let state =
            #"exec 5</dev/null; trap "" INT HUP; exec "$0" exec --group "$1" -- sh -c 'grep -E "^Sig(Blk|Ign)" /proc/self/status; ls /proc/self/fd'"#
        for program in [TestPaths.product("authkit"), alone] {
            let result = try await ProcessRunner.run(
                URL(fileURLWithPath: "/bin/sh"), ["-c", state, program.path, world.group], environment: world.environment, timeout: 30)
            world.recordExternal(program.lastPathComponent, ["exec"], result)
            // (glibc keeps signals 32 and 33 for itself and refuses to set them: as the parent left them.)
            let masks = result.stdout.split(separator: "\n").filter { $0.hasPrefix("Sig") }.map {
                UInt64($0.split(separator: "\t").last ?? "", radix: 16)
            }
            #expect(
                result.status == 0 && masks.count == 2 && masks.allSatisfy { $0.map { $0 & ~0x1_8000_0000 == 0 } ?? false },
                "\(program.lastPathComponent): \(result.stdout) \(result.stderr)")
            let descriptors = result.stdout.split(separator: "\n").filter { $0.allSatisfy(\.isNumber) }
            #expect(descriptors == ["0", "1", "2", "3", "5"], "\(program.lastPathComponent): \(descriptors)")
        }
        // The agent names the program the token is for, as for authkit's exec.
        let named = try await world.lean(["exec"] + group + ["--", "true"])
        #expect(named.status == 0, "\(named.stderr)")
        let events = try await Self.events(world, group: world.group)
        let truePath = try #require(["/usr/bin/true", "/bin/true"].first { FileManager.default.isExecutableFile(atPath: $0) })
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
}
