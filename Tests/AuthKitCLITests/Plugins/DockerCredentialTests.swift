import Foundation
import TestSupport
import Testing

/// The docker CLI (on PATH, or Debian's docker.io unpacked by the bootstrap)
/// with `docker-credential-authkit`, set up by `authkit setup docker`, against an engine
/// stand-in that records the credentials the CLI sends for each registry.
@Suite struct DockerCredentialTests {
    static func dockerCLI() -> URL? {
        let unpacked = TestPaths.packageRoot.appendingPathComponent(".build-tools/docker.io/usr/bin/docker")
        for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":") {
            let candidate = URL(fileURLWithPath: String(directory)).appendingPathComponent("docker")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        return FileManager.default.isExecutableFile(atPath: unpacked.path) ? unpacked : nil
    }

    // With and without the agent: the same answers either way.
    @Test(arguments: [false, true])
    func pullLoginAndLogoutWithTheHelper(agent: Bool) async throws {
        let docker = try #require(Self.dockerCLI(), "no docker CLI: run ./scripts/bootstrap (it unpacks Debian's docker.io)")
        let world = try await CLIHarness.start(agent: agent)
        defer { world.stop() }
        try await world.signIn(user: "ada")
        let mapped = "127.0.0.1:5999", unmapped = "127.0.0.1:5998"
        let engine = try DockerEngineStandIn(acceptTokensFrom: world.provider, privateRegistries: [mapped], directory: world.scratch)
        defer { engine.stop() }
        let bin = world.scratch.appendingPathComponent("bin")
        try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
        var environment = world.environment
        environment["DOCKER_CONFIG"] = world.scratch.appendingPathComponent("docker").path
        environment["DOCKER_HOST"] = engine.host
        environment["HOME"] = world.scratch.path
        environment["PATH"] = bin.path + ":" + (environment["PATH"] ?? "/usr/bin:/bin")

        // A config.json of the user's own, kept as it is apart from credHelpers.
        try FileManager.default.createDirectory(atPath: environment["DOCKER_CONFIG"]!, withIntermediateDirectories: true)
        let configPath = environment["DOCKER_CONFIG"]! + "/config.json"
        try #"{"auths":{"other.example":{}},"psFormat":"table {{.ID}}","credHelpers":{"gcr.io":"gcloud"}}"#.write(
            toFile: configPath, atomically: false, encoding: .utf8)
        for _ in 0..<2 {
            let setup = try await world.authkit(
                ["setup", "docker", "--registry", mapped, "--group", world.group, "--link-dir", bin.path], environment: environment)
            #expect(setup.status == 0, "\(setup.stderr)")
        }
        let config = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: configPath))) as? [String: Any])
        #expect((config["credHelpers"] as? [String: String]) == ["gcr.io": "gcloud", mapped: "authkit"])
        #expect(config["psFormat"] as? String == "table {{.ID}}" && config["auths"] != nil && config["credsStore"] == nil)
        let list = try await world.authkit(["setup", "--list"], environment: environment)
        #expect(list.status == 0 && list.stdout.contains("docker   set up for \(mapped) (\(configPath))"), "\(list.stdout)")

        // A mapped registry: the CLI sends the live access token (user oauth2).
        let pull = try await ProcessRunner.run(docker, ["pull", "-q", "\(mapped)/team/app"], environment: environment, timeout: 60)
        #expect(pull.status == 0, "\(pull.stderr)")
        // An unmapped one: "not found", and docker goes on anonymously.
        let anonymous = try await ProcessRunner.run(
            docker, ["pull", "-q", "\(unmapped)/public/app"], environment: environment, timeout: 60)
        #expect(anonymous.status == 0, "\(anonymous.stderr)")
        let pulls = try engine.requests().filter { $0.path == "/images/create" }
        #expect(pulls.first { $0.registry == mapped }.map { $0.live && $0.user == "oauth2" } == true, "\(pulls)")
        #expect(pulls.first { $0.registry == unmapped }.map { !$0.live && $0.user == nil } == true, "\(pulls)")

        // docker login stores (nothing) and logout erases (nothing): the sign-in stays.
        let login = try await ProcessRunner.run(
            docker, ["login", "-u", "someone", "--password-stdin", mapped], environment: environment, stdin: "typed-password\n", timeout: 60
        )
        #expect(login.status == 0, "\(login.stderr)")
        let logout = try await ProcessRunner.run(docker, ["logout", mapped], environment: environment, timeout: 60)
        #expect(logout.status == 0, "\(logout.stderr)")
        #expect(try await world.authkit(["status", "--group", world.group]).status == 0, "docker login/logout touched the sign-in")
        let again = try await ProcessRunner.run(docker, ["pull", "-q", "\(mapped)/team/app"], environment: environment, timeout: 60)
        #expect(again.status == 0, "\(again.stderr)")
        try await world.assertNoSecretsLeaked()
    }

    /// The helper protocol directly, as docker-credential-authkit and with flags.
    @Test func theHelperProtocol() async throws {
        let world = try await CLIHarness.start()
        defer { world.stop() }
        try await world.signIn(user: "ada")
        try FileManager.default.createDirectory(at: world.configDirectory, withIntermediateDirectories: true)
        try "[registry \"registry.example.com\"]\ngroup = \(world.group)\nusername = ada\n".write(
            to: world.configDirectory.appendingPathComponent("config"), atomically: false, encoding: .utf8)
        // The argv[0] form docker uses.
        let link = world.scratch.appendingPathComponent("docker-credential-authkit")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: TestPaths.product("authkit"))
        let get = try await ProcessRunner.run(
            link, ["get"], environment: world.environment, stdin: "https://registry.example.com/v2/\n", timeout: 30)
        #expect(get.status == 0, "\(get.stderr)")
        let answer = try #require(try JSONSerialization.jsonObject(with: Data(get.stdout.utf8)) as? [String: String])
        #expect(
            answer["ServerURL"] == "https://registry.example.com/v2/" && answer["Username"] == "ada" && answer["Secret"]?.isEmpty == false)
        let notFound = try await ProcessRunner.run(link, ["get"], environment: world.environment, stdin: "evil.example\n", timeout: 30)
        #expect(notFound.status == 1 && notFound.stdout == "credentials not found in native keychain\n" && notFound.stderr.isEmpty)
        let list = try await ProcessRunner.run(link, ["list"], environment: world.environment, stdin: "", timeout: 30)
        #expect(list.stdout == #"{"registry.example.com":"ada"}"# + "\n")
        for action in ["store", "erase"] {
            let result = try await ProcessRunner.run(
                link, [action], environment: world.environment, stdin: #"{"ServerURL":"registry.example.com","Username":"x","Secret":"y"}"#,
                timeout: 30)
            #expect(result.status == 0 && result.stdout.isEmpty, "\(action): \(result.stderr)")
        }
        // With flags: any registry asked about.
        let flagged = try await world.authkit(["credential", "docker", "--group", world.group, "get"], stdin: "ghcr.io\n")
        #expect(flagged.status == 0 && flagged.stdout.contains(#""Username":"oauth2""#))
        // Bad input: one line, non-zero, empty stdout.
        for (arguments, input) in [
            (["credential", "docker", "fetch"], "x\n"), (["credential", "docker", "get"], "\n"),
            (["credential", "docker", "get"], "a\u{0}b\n"),
        ] {
            let result = try await world.authkit(arguments, stdin: input)
            #expect(
                result.status != 0 && result.stdout.isEmpty && result.stderr.split(separator: "\n").count == 1,
                "\(arguments) \(result.stderr)")
        }
        // A config.json that is not JSON is refused and left untouched.
        let dockerConfig = world.scratch.appendingPathComponent("docker-bad")
        try FileManager.default.createDirectory(at: dockerConfig, withIntermediateDirectories: true)
        try #"{"auths": {}, "auths": {}}"#.write(to: dockerConfig.appendingPathComponent("config.json"), atomically: false, encoding: .utf8)
        let refused = try await world.authkit(
            ["setup", "docker", "--registry", "r.example", "--link-dir", world.scratch.path],
            environment: ["DOCKER_CONFIG": dockerConfig.path])
        #expect(refused.status == 2 && refused.stderr.contains("not valid JSON"), "\(refused.stderr)")
        #expect(
            try String(contentsOf: dockerConfig.appendingPathComponent("config.json"), encoding: .utf8) == #"{"auths": {}, "auths": {}}"#)
        try await world.assertNoSecretsLeaked()
    }

    /// setup writes only values the config file can hold as they are, and nothing at all unless
    /// every step succeeds: a user name with a line break cannot add a mapping, and a failed
    /// step takes back the mapping it wrote.
    @Test func setupValidatesEveryValueAndWritesAllOrNothing() async throws {
        let world = try await CLIHarness.start()
        defer { world.stop() }
        let config = URL(fileURLWithPath: world.environment["XDG_CONFIG_HOME"] ?? "").appendingPathComponent("authkit/config")
        try FileManager.default.createDirectory(at: config.deletingLastPathComponent(), withIntermediateDirectories: true)
        let before = "[registry \"kept.example\"]\ngroup = \(world.group)\n\n[credential \"https://git.example\"]\ngroup = g\n"
        try before.write(to: config, atomically: false, encoding: .utf8)
        let docker = world.scratch.appendingPathComponent("docker")
        let environment = ["DOCKER_CONFIG": docker.path]
        let hostile: [[String]] = [
            ["setup", "docker", "--registry", "r.example", "--username", "ada\n[registry \"evil.example\"]\ngroup = x"],
            ["setup", "docker", "--registry", "r.example", "--group", "g\rx"],
            ["setup", "docker", "--registry", "r.example", "--scope", "a\u{7F}"],
            ["setup", "docker", "--registry", "r.example\"]"],
            // docker and podman look their helper up under the host exactly: never asked.
            ["setup", "docker", "--registry", "https://r.example/"], ["setup", "docker", "--registry", "R.example"],
            ["setup", "podman", "--registry", "r.example/v2"],
            ["setup", "git", "--host", "https://git.example/\"]\n[x]"],
            ["setup", "git", "--host", "https://git2.example", "--username", " ada"],
            // A password in the URL would be written in the clear into two config files.
            ["setup", "git", "--host", "https://ada:hunter2@git3.example"],
            // Beside an entry naming the same registry or URL, every request would be ambiguous.
            ["setup", "docker", "--registry", "kept.example", "--group", "other"],
            ["setup", "git", "--host", "https://git.example/", "--group", "other"],
        ]
        for arguments in hostile {
            let result = try await world.authkit(
                arguments + ["--link-dir", world.scratch.path].filter { _ in arguments[1] == "docker" }, environment: environment)
            #expect(result.status == 2, "\(arguments): \(result.status) \(result.stderr)")
            #expect(try String(contentsOf: config, encoding: .utf8) == before, "\(arguments) changed the config file")
        }
        #expect(!FileManager.default.fileExists(atPath: docker.appendingPathComponent("config.json").path))
        #expect(try await world.authkit(["config"]).status == 0, "every command still reads the file")

        // docker's config.json cannot be written (its folder is a file): the mapping written
        // just before is taken back.
        let blocked = world.scratch.appendingPathComponent("not-a-folder")
        try "".write(to: blocked, atomically: false, encoding: .utf8)
        let failed = try await world.authkit(
            ["setup", "docker", "--registry", "r.example", "--group", world.group, "--link-dir", world.scratch.path],
            environment: ["DOCKER_CONFIG": blocked.appendingPathComponent("docker").path])
        #expect(failed.status == 2, "\(failed.stderr)")
        #expect(try String(contentsOf: config, encoding: .utf8) == before, "the mapping stayed although setup failed")
    }

    /// The package's plug-in links are relative (`docker-credential-authkit -> authkit`) and
    /// dpkg's: setup leaves a link that already leads to this authkit as it is.
    @Test func setupKeepsARelativeLinkThatLeadsHere() async throws {
        let world = try await CLIHarness.start()
        defer { world.stop() }
        let bin = world.scratch.appendingPathComponent("usr-bin")
        try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: bin.path + "/authkit", withDestinationPath: TestPaths.product("authkit").path)
        let link = bin.path + "/docker-credential-authkit"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "authkit")
        let setUp = try await world.authkit(
            ["setup", "docker", "--registry", "r.example", "--link-dir", bin.path],
            environment: ["DOCKER_CONFIG": world.scratch.appendingPathComponent("docker-relative").path])
        #expect(setUp.status == 0, "\(setUp.stderr)")
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link) == "authkit", "the relative link was replaced")
        // A link to anything else is replaced by one to this authkit.
        try "#!/bin/sh\n".write(toFile: bin.path + "/other", atomically: false, encoding: .utf8)
        try FileManager.default.removeItem(atPath: link)
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "other")
        let again = try await world.authkit(
            ["setup", "docker", "--registry", "r.example", "--link-dir", bin.path],
            environment: ["DOCKER_CONFIG": world.scratch.appendingPathComponent("docker-relative").path])
        #expect(again.status == 0, "\(again.stderr)")
        let replaced = try FileManager.default.destinationOfSymbolicLink(atPath: link)
        #expect(
            URL(fileURLWithPath: replaced).resolvingSymlinksInPath() == TestPaths.product("authkit").resolvingSymlinksInPath(),
            "\(replaced)")
    }
}
