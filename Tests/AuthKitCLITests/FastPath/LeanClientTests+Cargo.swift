import AuthKitCore
import Foundation
import TestSupport
import Testing

/// cargo's credential provider through the lean client: its hello once, then the same answer
/// authkit gives, or the request handed over after the hello, which authkit does not repeat.
extension LeanClientTests {
    static func cargoRequest(_ index: String, kind: String = "get", args: [String] = []) -> String {
        let listed = args.map { "\"\($0)\"" }.joined(separator: ",")
        return #"{"v":1,"kind":"\#(kind)","operation":"read","registry":{"index-url":"\#(index)","name":"internal"},"args":[\#(listed)]}"#
            + "\n"
    }

    @Test func cargosProviderIsAnsweredAsAuthkitAnswersIt() async throws {
        let (lean, world) = try await Self.signedInWorld()
        defer { world.stop() }
        let alone = try Self.copy(lean, to: "alone", in: world)
        // Under the name of the package's link, `credential-provider = "cargo-credential-authkit"`.
        let named = try Self.copy(lean, to: "named", in: world, as: "cargo-credential-authkit")
        try FileManager.default.createDirectory(at: world.configDirectory, withIntermediateDirectories: true)
        try "[credential \"https://cargo.example\"]\ngroup = \(world.group)\n".write(
            to: world.configDirectory.appendingPathComponent("config"), atomically: false, encoding: .utf8)
        let hello = CargoCredentialText.greeting
        let mapped = "sparse+https://cargo.example/index/", plugin = ["--cargo-plugin"]
        let served: [([String], String, URL, [String: String])] = [
            (plugin, Self.cargoRequest(mapped), alone, [:]), (plugin, Self.cargoRequest(mapped), named, [:]),
            (["credential", "cargo", "--cargo-plugin"], Self.cargoRequest(mapped), alone, [:]),
            // The sign-in named in credential-provider's options serves any index.
            (
                plugin, Self.cargoRequest("sparse+https://any.example/i/", args: ["credential", "cargo", "--group", world.group]), alone,
                [:]
            ),
            (plugin, Self.cargoRequest(mapped, args: ["--min-ttl", "600"]), alone, [:]),
            (plugin, Self.cargoRequest(mapped).replacingOccurrences(of: "\n", with: "\r\n"), alone, [:]),
            // Nothing maps it: cargo tries its next provider. login and logout never reach the sign-in.
            (plugin, Self.cargoRequest("sparse+https://other.example/index/"), alone, [:]),
            (plugin, Self.cargoRequest(mapped, kind: "login"), alone, [:]), (plugin, Self.cargoRequest(mapped, kind: "logout"), alone, [:]),
            // cargo closed without asking: the hello, nothing else. One request is read, one answered.
            (plugin, "", alone, [:]), (plugin, Self.cargoRequest(mapped) + Self.cargoRequest(mapped, kind: "logout"), alone, [:]),
            // The end of input ends the line too; without an agent, the Secret Service's token.
            (plugin, String(Self.cargoRequest(mapped).dropLast()), alone, [:]),
            (plugin, Self.cargoRequest(mapped), alone, ["AUTHKIT_AGENT": "off"]),
        ]
        for (arguments, input, copy, environment) in served {
            let expected = try await world.authkit(arguments, environment: environment, stdin: input)
            let got = try await world.lean(arguments, copy: copy, environment: environment, stdin: input)
            let title = arguments.joined(separator: " ") + " \(input.debugDescription)"
            #expect(got.stdout.hasPrefix(hello) && !got.stdout.dropFirst(hello.count).contains(#"{"v":"#), "\(title): \(got.stdout)")
            #expect(
                got.status == expected.status && got.stdout == expected.stdout && got.stderr == expected.stderr, "\(title): \(got.stderr)")
        }
        #expect(try await world.authkit(plugin, stdin: Self.cargoRequest(mapped)).stdout.contains(#""token":"Bearer "#))
        // The refusals, exactly: no token, no message.
        for (request, kind) in [
            (Self.cargoRequest("sparse+https://other.example/index/"), "url-not-supported"),
            (Self.cargoRequest(mapped, kind: "logout"), "operation-not-supported"),
        ] {
            let got = try await world.lean(plugin, copy: alone, stdin: request)
            #expect(got.stdout == hello + #"{"Err":{"kind":"\#(kind)"}}"# + "\n", "\(got.stdout)")
        }
        // Handed to authkit after the hello, which it does not say again.
        let handedOver: [([String], String)] = [
            (plugin, "not json\n"), (plugin, #"{"v":2,"kind":"get","registry":{"index-url":"\#(mapped)"}}"# + "\n"),
            (plugin, Self.cargoRequest(mapped, args: ["--bogus"])),
            (plugin, Self.cargoRequest(mapped, args: ["--group", "com.example.nobody"])),
            (plugin, Self.cargoRequest("sparse+http://cargo.example/index/")), (plugin, Self.cargoRequest("ssh://git@cargo.example/index")),
            (plugin, String(repeating: "x", count: CredentialInput.maximumLineBytes + 5)), (plugin, "{\u{0}}\n"),
            // The longest line authkit reads, and one byte more.
            (plugin, String(repeating: " ", count: CredentialInput.maximumLineBytes) + "\n"),
            (plugin, String(repeating: " ", count: CredentialInput.maximumLineBytes + 1) + "\n"),
        ]
        for (arguments, input) in handedOver {
            try await Self.expectHandedOver(arguments, stdin: input, alone: alone, in: world, greeting: hello)
        }
        // Handed over before the hello: an option authkit is to explain.
        try await Self.expectHandedOver(
            ["credential", "cargo", "--cargo-plugin", "--bogus"], stdin: Self.cargoRequest(mapped), alone: alone, in: world)
        // In place of authkit, a script that shows what it was given: the hello is marked said
        // (this process's id) only where the lean client said it, whatever it inherited.
        let copy = try Self.copy(lean, to: "handed", in: world)
        let stand = copy.deletingLastPathComponent().appendingPathComponent("authkit")
        try "#!/bin/sh\nprintf '%s\\n' \"$$\" \"${AUTHKIT_PLUGIN_GREETED-none}\"\n".write(to: stand, atomically: true, encoding: .utf8)
        chmod(stand.path, 0o755)
        let inherited = world.environment.merging([LeanTokenPlan.greetedVariable: "1"]) { $1 }
        let before = try await ProcessRunner.run(copy, ["credential", "cargo", "--bogus"], environment: inherited, stdin: "", timeout: 30)
        let beforeLines = before.stdout.split(separator: "\n").map(String.init)
        #expect(beforeLines.count == 2 && beforeLines[1] == "none", "\(before.stdout) \(before.stderr)")
        let after = try await ProcessRunner.run(copy, plugin, environment: inherited, stdin: "not json\n", timeout: 30)
        let afterLines = after.stdout.split(separator: "\n").map(String.init)
        #expect(afterLines.count == 3 && afterLines[0] + "\n" == hello && afterLines[1] == afterLines[2], "\(after.stdout) \(after.stderr)")
        #expect(try await world.assertNoSecretsLeaked() > 0)
    }

    /// Real cargo takes the lean client's hello and answer: `cargo search` with a copy that
    /// cannot start authkit as the registry's provider, the agent's token accepted.
    @Test func cargoSearchesWithTheLeanClientAsItsProvider() async throws {
        let cargo = try #require(CargoCredentialTests.cargo(), "no cargo on PATH or in ~/.cargo/bin")
        let (lean, world) = try await Self.signedInWorld()
        defer { world.stop() }
        let alone = try Self.copy(lean, to: "alone", in: world)
        let registry = try CargoRegistryStandIn(acceptTokensFrom: world.provider)
        defer { registry.stop() }
        var environment = world.environment
        let cargoHome = world.scratch.appendingPathComponent("cargo-home")
        try FileManager.default.createDirectory(at: cargoHome, withIntermediateDirectories: true)
        try """
        [registries.internal]
        index = "\(registry.index)"
        credential-provider = ["\(alone.path)", "credential", "cargo", "--group", "\(world.group)"]

        """.write(to: cargoHome.appendingPathComponent("config.toml"), atomically: false, encoding: .utf8)
        environment["CARGO_HOME"] = cargoHome.path
        environment["CARGO_TERM_COLOR"] = "never"
        environment["PATH"] = cargo.deletingLastPathComponent().path + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
        if let home = getpwuid(getuid())?.pointee.pw_dir {
            environment["RUSTUP_HOME"] = ProcessInfo.processInfo.environment["RUSTUP_HOME"] ?? String(cString: home) + "/.rustup"
        }
        let arguments = ["search", "--registry", "internal", "probe"]
        let cargoEnvironment = environment
        let search = try await offThePool {
            try ProcessRunner.run(cargo, arguments, environment: cargoEnvironment, currentDirectory: world.scratch, timeout: 120)
        }
        world.recordExternal("cargo", arguments, search)
        #expect(search.status == 0 && search.stdout.contains("authkit-probe"), "\(search.stdout)\(search.stderr)")
        let requests = try await registry.requests()
        #expect(requests.contains { $0.live && $0.scheme == "Bearer" }, "\(requests)")
        #expect(try await world.assertNoSecretsLeaked() > 0)
    }
}
