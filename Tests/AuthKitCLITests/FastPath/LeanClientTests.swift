import Foundation
import TestSupport
import Testing

/// The lean client, `authkit-lean` (Lean/), run as a script would run `authkit token`, against
/// a real agent: it prints the agent's token itself, byte for byte what authkit prints, and
/// hands everything else to the authkit beside it, so the words and exit codes are authkit's;
/// a refusal it got is handed over and authkit explains it without asking the agent again.
@Suite struct LeanClientTests {
    /// `text` with runs of digits as `#`: a message that names seconds left may differ by one
    /// between two runs.
    static func steady(_ text: String) -> String {
        text.replacingOccurrences(of: "[0-9]+", with: "#", options: .regularExpression)
    }

    /// A copy of the lean client alone in a folder: whatever it hands over fails to start.
    static func loneCopy(_ lean: URL, in world: CLIHarness) throws -> URL {
        let folder = world.scratch.appendingPathComponent("alone")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let copy = folder.appendingPathComponent("authkit-lean")
        try FileManager.default.copyItem(at: lean, to: copy)
        return copy
    }

    @Test func servesTheAgentsTokenItselfAndHandsTheRestToAuthkit() async throws {
        let lean = try await offThePool { try LeanClient.build() }
        let world = try await CLIHarness.start(agent: true)
        defer { world.stop() }
        try await world.signIn()
        let alone = try Self.loneCopy(lean, in: world)

        let token = ["token", "--group", world.group]
        let full = try await world.authkit(token)
        try #require(full.status == 0, "authkit token: \(full.stderr)")
        for copy in [nil, alone] {
            let served = try await world.lean(token, copy: copy)
            #expect(served.status == 0 && served.stdout == full.stdout && served.stderr.isEmpty, "\(served.stderr)")
        }

        // What it does not answer itself: authkit's own output and exit code, through the
        // lean client beside authkit; the copy alone says it cannot start authkit.
        let handedOver: [([String], [String: String])] = [
            (token + ["--min-ttl", "86400"], [:]),  // the provider's tokens live an hour: authkit's exit 8
            (["token", "--bogus"], [:]),
            (["status", "--group", world.group], [:]),
            (token + ["--json"], [:]),
            (token, ["AUTHKIT_AGENT": "off"]),  // no agent: authkit reads the store
            (["token", "--group", "com.example.nobody"], [:]),  // the agent's refusal
        ]
        for (arguments, environment) in handedOver {
            let expected = try await world.authkit(arguments, environment: environment)
            let got = try await world.lean(arguments, environment: environment)
            let title = arguments.joined(separator: " ")
            #expect(got.status == expected.status, "\(title): \(got.status) \(got.stderr)")
            #expect(Self.steady(got.stdout) == Self.steady(expected.stdout), "\(title)")
            #expect(Self.steady(got.stderr) == Self.steady(expected.stderr), "\(title)")
            let lone = try await world.lean(arguments, copy: alone, environment: environment)
            #expect(lone.status == 2 && lone.stdout.isEmpty && lone.stderr.contains("cannot run authkit at"), "\(title): \(lone.stderr)")
        }
        #expect(try await world.assertNoSecretsLeaked() > 0)
    }

    @Test func aRefusalIsHandedOverAndAuthkitDoesNotAskAgain() async throws {
        let lean = try await offThePool { try LeanClient.build() }
        let world = try await CLIHarness.start(agent: true)
        defer { world.stop() }
        try await world.signIn()
        // In place of authkit, a script that shows what it was given.
        let folder = world.scratch.appendingPathComponent("handed")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let copy = folder.appendingPathComponent("authkit-lean")
        try FileManager.default.copyItem(at: lean, to: copy)
        let stand = folder.appendingPathComponent("authkit")
        try "#!/bin/sh\nprintf '%s\\n' \"$0\" \"$@\" \"${AUTHKIT_AGENT_ANSWER-none}\"\n".write(to: stand, atomically: true, encoding: .utf8)
        chmod(stand.path, 0o755)

        let refused = try await world.lean(["token", "--group", "com.example.nobody"], copy: copy)
        let lines = refused.stdout.split(separator: "\n").map(String.init)
        // The same arguments, and the agent's refusal.
        try #require(lines.count == 5, "\(refused.stdout) \(refused.stderr)")
        #expect(Array(lines[0...3]) == [stand.path, "token", "--group", "com.example.nobody"])
        #expect(lines[4].contains(#""ok":false"#) && lines[4].contains(#""error""#))
        // A token answer, or anything but a refusal, is never handed over.
        let other = try await world.lean(["token", "--group", world.group, "--min-ttl", "86400"], copy: copy)
        #expect(other.stdout.hasSuffix("none\n"), "\(other.stdout)")

        // authkit takes the refusal it is handed as the agent's answer: for a group the agent
        // would serve, it reports the refusal and prints no token.
        let handed = try await world.authkit(["token", "--group", world.group], environment: ["AUTHKIT_AGENT_ANSWER": lines[4]])
        #expect(handed.status != 0 && handed.stdout.isEmpty, "\(handed.status) \(handed.stderr)")
        let plain = try await world.authkit(["token", "--group", world.group])
        #expect(plain.status == 0)
        // A token in the variable is not taken.
        let forged = #"{"v":1,"ok":true,"token":"forged","expires_at":4000000000,"account":"mallory"}"#
        let notForged = try await world.authkit(["token", "--group", world.group], environment: ["AUTHKIT_AGENT_ANSWER": forged])
        #expect(notForged.status == 0 && notForged.stdout == plain.stdout)
    }
}
