import AuthKitCore
import Foundation
import TestSupport
import Testing

@testable import AuthKit
@testable import AuthKitCLI

#if canImport(Glibc)
import Glibc
#endif

/// The cargo on this machine (≥ 1.74: credential providers) with authkit as the provider of a
/// sparse registry that takes only the provider's live access tokens.
@Suite struct CargoCredentialTests {
    static func cargo() -> URL? {
        var candidates = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map { String($0) + "/cargo" }
        if let home = getpwuid(getuid())?.pointee.pw_dir { candidates.append(String(cString: home) + "/.cargo/bin/cargo") }
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }.map { URL(fileURLWithPath: $0) }
    }

    /// cargo fetches the index URL as written, so its path is matched as written: an escaped
    /// `/` stays inside its segment and never climbs into another team's mapping.
    @Test(
        arguments: [
            ("sparse+https://cargo.example.com/team-b%2F..%2Fteam-a/", nil), ("sparse+https://cargo.example.com/team-a%2Fx/", nil),
            ("sparse+https://cargo.example.com/team-a/", "a"), ("sparse+https://cargo.example.com/%74eam-a/index/", "a"),
            ("sparse+https://cargo.example.com/team-b/", "b"),
        ] as [(String, String?)])
    func theIndexURLIsMatchedAsCargoSendsIt(url: String, group: String?) throws {
        let file = try ConfigFile.parse(
            """
            [credential "https://cargo.example.com/team-a"]
            group = a

            [credential "https://cargo.example.com/team-b"]
            group = b
            """, path: "/home/ada/.config/authkit/config")
        #expect(try CargoCredentialAdapter.target(for: url, flags: CredentialFlags(), in: file)?.group == group, "\(url)")
    }

    /// What the command line or cargo's `credential-provider` options name is what is asked
    /// for: `--resource` too, over a mapping's own.
    @Test func theProvidersOptionsReachTheRequest() throws {
        let line =
            #"{"v":1,"kind":"get","registry":{"index-url":"sparse+https://cargo.example.com/team-a/"},"args":"#
            + #"["credential","cargo","--group","g","--resource","https://cargo.example.com/","--scope","read"]}"#
        let flags = try CargoRequest(parsing: line).flags(over: CredentialFlags())
        #expect(flags.resources == ["https://cargo.example.com/"] && flags.scopes == ["read"] && flags.selector.group == "g")
        let file = try ConfigFile.parse(
            "[credential \"https://cargo.example.com/team-a\"]\ngroup = a\n\n[credential \"https://cargo.example.com/team-b\"]\n"
                + "group = b\nresource = https://other.example/\n",
            path: "/home/ada/.config/authkit/config")
        var command = CredentialFlags()
        command.resources = ["https://cargo.example.com/"]
        let target = try CargoCredentialAdapter.target(for: "sparse+https://cargo.example.com/team-a/", flags: command, in: file)
        #expect(target?.resources == ["https://cargo.example.com/"] && target?.group == "a")
        // A mapping that names another resource than the command line: refused, not replaced.
        #expect(throws: CredentialPlugin.Failure.self) {
            _ = try CargoCredentialAdapter.target(for: "sparse+https://cargo.example.com/team-b/", flags: command, in: file)
        }
    }

    /// An http(s) index gets the token itself: never over plain http beyond loopback, nor for a
    /// URL whose host is not plain; a git index over ssh is served as before (its token goes to
    /// the API its config.json names).
    @Test func theIndexURLItselfMustBeSafeToSendTheTokenTo() throws {
        var flags = CredentialFlags()
        flags.selector.group = "g"
        for url in [
            "sparse+https://cargo.example.com/", "sparse+http://127.0.0.1:8080/", "sparse+http://[::1]:8080/",
            "ssh://git@git.example.com/index",
        ] {
            #expect(try CargoCredentialAdapter.target(for: url, flags: flags) != nil, "\(url)")
        }
        for url in [
            "sparse+http://cargo.example.com/", "sparse+https://evil.example?@cargo.example.com/", "sparse+https://u@cargo.example.com/",
        ] {
            #expect(try CargoCredentialAdapter.target(for: url, flags: flags) == nil, "\(url)")
        }
    }

    @Test(arguments: [false, true])
    func cargoFetchesAndSearchesWithTheSignInRefreshingOnce(agent: Bool) async throws {
        let cargo = try #require(Self.cargo(), "no cargo on PATH or in ~/.cargo/bin")
        let world = try await CLIHarness.start(agent: agent)
        defer { world.stop() }
        try await world.provider.configure(["access_token_ttl": 30])
        try await world.signIn(user: "ada")
        try await world.provider.configure(["access_token_ttl": 3600])
        let registry = try CargoRegistryStandIn(acceptTokensFrom: world.provider)
        defer { registry.stop() }
        var environment = world.environment
        let cargoHome = world.scratch.appendingPathComponent("cargo-home")
        environment["CARGO_HOME"] = cargoHome.path
        environment["HOME"] = world.scratch.path
        environment["CARGO_TERM_COLOR"] = "never"
        // rustup's proxies find their toolchains through RUSTUP_HOME, else HOME, which the test replaced.
        if let home = getpwuid(getuid())?.pointee.pw_dir {
            environment["RUSTUP_HOME"] = ProcessInfo.processInfo.environment["RUSTUP_HOME"] ?? String(cString: home) + "/.rustup"
        }
        environment["PATH"] = cargo.deletingLastPathComponent().path + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
        for _ in 0..<2 {
            let setup = try await world.authkit(
                ["setup", "cargo", "--registry", "internal", "--index", registry.index, "--group", world.group], environment: environment)
            #expect(setup.status == 0, "\(setup.stderr)")
        }
        let config = try String(contentsOf: cargoHome.appendingPathComponent("config.toml"), encoding: .utf8)
        #expect(config.components(separatedBy: "[registries.internal]").count == 2, "one section, however often set up: \(config)")
        #expect(try await world.authkit(["setup", "--list"], environment: environment).stdout.contains("cargo    set up for internal"))

        let project = world.scratch.appendingPathComponent("project")
        try FileManager.default.createDirectory(at: project.appendingPathComponent("src"), withIntermediateDirectories: true)
        try """
        [package]
        name = "consumer"
        version = "0.1.0"
        edition = "2021"

        [dependencies]
        authkit-probe = { version = "0.1", registry = "internal" }
        """.write(to: project.appendingPathComponent("Cargo.toml"), atomically: false, encoding: .utf8)
        try "".write(to: project.appendingPathComponent("src/lib.rs"), atomically: false, encoding: .utf8)
        let cargoEnvironment = environment
        func run(_ arguments: [String]) async throws -> ProcessResult {
            let result = try await offThePool {
                try ProcessRunner.run(cargo, arguments, environment: cargoEnvironment, currentDirectory: project, timeout: 120)
            }
            world.recordExternal("cargo", arguments, result)
            return result
        }

        try await world.provider.clearLog()
        let fetch = try await run(["fetch"])
        #expect(fetch.status == 0, "cargo fetch through authkit: \(fetch.stderr)")
        #expect(try await world.provider.log().count(grantType: "refresh_token") == 1, "the 30-second token was refreshed once")
        let requests = try await registry.requests()
        #expect(requests.contains { $0.path.hasPrefix("/dl/") && $0.live && $0.scheme == "Bearer" }, "\(requests)")
        let search = try await run(["search", "--registry", "internal", "probe"])
        #expect(search.status == 0 && search.stdout.contains("authkit-probe"), "\(search.stdout)\(search.stderr)")
        #expect(try await world.provider.log().count(grantType: "refresh_token") == 1, "no second refresh")

        // Signed out: cargo shows authkit's one line, and nothing is deleted by cargo.
        #expect(try await world.authkit(["logout", "--group", world.group]).status == 0)
        let signedOut = try await run(["search", "--registry", "internal", "probe"])
        #expect(
            signedOut.status != 0 && signedOut.stderr.contains("nobody is signed in in the group \(world.group)"), "\(signedOut.stderr)")
        try await world.assertNoSecretsLeaked()
    }

    @Test func theProtocolAnswersEveryRequestOnOneLineAndNeverSignsInOrOut() async throws {
        let world = try await CLIHarness.start()
        defer { world.stop() }
        try await world.signIn(user: "ada")
        let index = "sparse+http://127.0.0.1:9/index/"
        try FileManager.default.createDirectory(at: world.configDirectory, withIntermediateDirectories: true)
        try "[credential \"http://127.0.0.1:9\"]\ngroup = \(world.group)\n".write(
            to: world.configDirectory.appendingPathComponent("config"), atomically: false, encoding: .utf8)
        let hello = #"{"v":[1]}"# + "\n"
        func ask(_ request: String) async throws -> ProcessResult {
            try await world.authkit(["--cargo-plugin"], stdin: request + "\n")
        }
        let get = try await ask(
            #"{"v":1,"kind":"get","operation":"read","registry":{"index-url":"\#(index)","name":"internal"},"args":["credential","cargo"]}"#
        )
        #expect(get.status == 0 && get.stdout.hasPrefix(hello + #"{"Ok":{"#), "\(get.stdout)\(get.stderr)")
        #expect(get.stdout.contains(#""token":"Bearer "#) && get.stdout.contains(#""cache":"expires""#))
        #expect(get.stdout.split(separator: "\n").count == 2)
        let cases: [(String, String)] = [
            (
                #"{"v":1,"kind":"get","operation":"read","registry":{"index-url":"sparse+https://crates.example/index/"},"args":[]}"#,
                #""kind":"url-not-supported""#
            ),
            (#"{"v":1,"kind":"login","registry":{"index-url":"\#(index)"},"token":"x","args":[]}"#, #""kind":"operation-not-supported""#),
            (#"{"v":1,"kind":"logout","registry":{"index-url":"\#(index)"},"args":[]}"#, #""kind":"operation-not-supported""#),
            (#"{"v":2,"kind":"get","registry":{"index-url":"\#(index)"}}"#, #""kind":"other""#),
            ("not json", #""kind":"other""#),
            (#"{"v":1,"kind":"get","operation":"read","registry":{"index-url":"\#(index)"},"args":["--bogus"]}"#, #""kind":"other""#),
        ]
        for (request, expected) in cases {
            let answer = try await ask(request)
            #expect(
                answer.status == 0 && answer.stdout.hasPrefix(hello) && answer.stdout.contains(expected),
                "\(request): \(answer.stdout)\(answer.stderr)")
            #expect(answer.stdout.split(separator: "\n").count == 2, "hello and one answer line")
        }
        // Logout from cargo changed nothing.
        #expect(try await world.authkit(["token", "--group", world.group]).status == 0)
        try await world.assertNoSecretsLeaked()
    }
}
