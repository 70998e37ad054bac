import Foundation
import TestSupport
import Testing

/// Git: Debian's git against a loopback smart-HTTP server that takes only the
/// provider's live access tokens, with `authkit credential git` as its credential helper.
@Suite struct GitCredentialTests {
    /// A world with ada signed in, a git server with one repository, and git's own config in
    /// the world's scratch space (nothing of the machine's).
    struct GitWorld {
        let world: CLIHarness
        let server: GitTestServer
        let environment: [String: String]
        let home: URL

        /// `resource`: the server takes only tokens for it, and the provider issues them (RFC 8707).
        static func start(agent: Bool = false, resource: String? = nil) async throws -> GitWorld {
            var options = OIDCTestProvider.Options()
            if let resource {
                options.resources = [resource]
                options.jwtAccessTokens = true
            }
            let world = try await CLIHarness.start(provider: options, agent: agent)
            try await world.signIn(user: "ada", resource.map { ["--resource", $0] } ?? [])
            let root = world.scratch.appendingPathComponent("repos")
            let home = world.scratch.appendingPathComponent("home")
            try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
            try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
            var environment = world.environment
            environment["GIT_CONFIG_GLOBAL"] = home.appendingPathComponent("gitconfig").path
            environment["GIT_CONFIG_NOSYSTEM"] = "1"
            environment["GIT_TERMINAL_PROMPT"] = "0"
            environment["GIT_ASKPASS"] = "/bin/false"
            environment["GIT_AUTHOR_NAME"] = "Ada"
            environment["GIT_AUTHOR_EMAIL"] = "ada@example.test"
            environment["GIT_COMMITTER_NAME"] = "Ada"
            environment["GIT_COMMITTER_EMAIL"] = "ada@example.test"
            environment["PATH"] =
                TestPaths.product("authkit").deletingLastPathComponent().path + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
            let git = GitWorld(
                world: world, server: try GitTestServer(acceptTokensFrom: world.provider, root: root, resource: resource),
                environment: environment, home: home)
            // A bare repository with one commit.
            let seed = world.scratch.appendingPathComponent("seed")
            try git.run(["init", "-q", "--bare", root.appendingPathComponent("repo.git").path])
            try git.run(["init", "-q", seed.path])
            try "hello\n".write(to: seed.appendingPathComponent("README"), atomically: false, encoding: .utf8)
            try git.run(["-C", seed.path, "add", "README"])
            try git.run(["-C", seed.path, "commit", "-q", "-m", "first"])
            try git.run(["-C", seed.path, "push", "-q", root.appendingPathComponent("repo.git").path, "HEAD:refs/heads/main"])
            try git.run(["--git-dir", root.appendingPathComponent("repo.git").path, "symbolic-ref", "HEAD", "refs/heads/main"])
            return git
        }

        func stop() {
            server.stop()
            world.stop()
        }

        var url: String { server.baseURL.absoluteString }

        @discardableResult
        func run(_ arguments: [String], stdin: String? = nil, expectSuccess: Bool = true) throws -> ProcessResult {
            let result = try ProcessRunner.run(
                URL(fileURLWithPath: "/usr/bin/git"), arguments, environment: environment, stdin: stdin, timeout: 60)
            if expectSuccess {
                #expect(result.status == 0, "git \(arguments.joined(separator: " ")): \(result.stderr)")
            }
            return result
        }
    }

    // With and without the agent: the same answers either way.
    @Test(arguments: [false, true])
    func cloneFetchAndPushThroughTheHelperAndAnEraseThatNeverSignsOut(agent: Bool) async throws {
        let git = try await GitWorld.start(agent: agent)
        defer { git.stop() }
        let world = git.world
        // `authkit setup git`, as the README says, twice (idempotent).
        for _ in 0..<2 {
            let setup = try await world.authkit(["setup", "git", "--host", git.url, "--group", world.group], environment: git.environment)
            #expect(setup.status == 0, "\(setup.stderr)")
        }
        let helpers = try git.run(["config", "--global", "--get-all", "credential.\(git.url).helper"])
        // "", helper, trailing
        #expect(helpers.stdout.split(separator: "\n", omittingEmptySubsequences: false).count == 3, "\(helpers.stdout)")
        let list = try await world.authkit(["setup", "--list"], environment: git.environment)
        #expect(list.status == 0 && list.stdout.contains("git      set up for \(git.url)"), "\(list.stdout) \(list.stderr)")

        let clone = world.scratch.appendingPathComponent("clone")
        try git.run(["clone", "-q", git.url + "/repo.git", clone.path])
        #expect(FileManager.default.fileExists(atPath: clone.appendingPathComponent("README").path))
        try "more\n".write(to: clone.appendingPathComponent("NOTES"), atomically: false, encoding: .utf8)
        try git.run(["-C", clone.path, "add", "NOTES"])
        try git.run(["-C", clone.path, "commit", "-q", "-m", "second"])
        try git.run(["-C", clone.path, "push", "-q", "origin", "HEAD:main"])
        #expect(
            try await git.server.requests().contains { $0.method == "POST" && $0.path.hasSuffix("git-receive-pack") && $0.status == 200 })
        #expect(try await git.server.requests().allSatisfy { $0.user == nil || $0.user == "oauth2" })

        // The server stops taking the token: git fails this once and calls erase; the sign-in
        // stays, and the next push gets a refreshed token.
        try await world.provider.clearLog()
        try await git.server.rejectNext(10)
        let refused = try git.run(["-C", clone.path, "fetch", "-q"], expectSuccess: false)
        #expect(refused.status != 0)
        let status = try await world.authkit(["status", "--json", "--group", world.group])
        #expect(status.status == 0, "the sign-in must survive git's erase: \(status.stderr)")
        let account = try #require((try CLIOutput.jsonObject(status.stdout)["accounts"] as? [[String: Any]])?.first)
        #expect(account["access_token_valid"] as? Bool == false, "erase marks the rejected token stale")
        #expect(account["refresh_token"] as? Bool == true)
        try await git.server.rejectNext(0)
        try "third\n".write(to: clone.appendingPathComponent("MORE"), atomically: false, encoding: .utf8)
        try git.run(["-C", clone.path, "add", "MORE"])
        try git.run(["-C", clone.path, "commit", "-q", "-m", "third"])
        try git.run(["-C", clone.path, "push", "-q", "origin", "HEAD:main"])
        #expect(try await world.provider.log().grantTypes["refresh_token", default: 0] == 1)
        try await world.assertNoSecretsLeaked()
    }

    /// The bare form serves mapped hosts only; an unmapped host gets an empty answer so git
    /// asks the next helper, which still works for it.
    @Test func theBareFormServesMappedHostsOnlyAndOtherHelpersStillWork() async throws {
        let git = try await GitWorld.start()
        defer { git.stop() }
        let world = git.world
        let config = world.configDirectory
        try FileManager.default.createDirectory(at: config, withIntermediateDirectories: true)
        try "[credential \"\(git.url)\"]\ngroup = \(world.group)\nusername = ada\n".write(
            to: config.appendingPathComponent("config"), atomically: false, encoding: .utf8)
        let store = git.home.appendingPathComponent("git-credentials")
        try "https://someone:other-secret@other.example\n".write(to: store, atomically: false, encoding: .utf8)
        // git runs `!`-helpers through the shell, and a bare word `authkit` as git-credential-authkit.
        try git.run(["config", "--global", "--add", "credential.helper", "!authkit credential git"])
        try git.run(["config", "--global", "--add", "credential.helper", "store --file \(store.path)"])

        let host = git.server.baseURL.host.map { "\($0):\(git.server.baseURL.port ?? 80)" } ?? ""
        let mapped = try git.run(["credential", "fill"], stdin: "protocol=http\nhost=\(host)\n\n")
        #expect(mapped.stdout.contains("username=ada\n"), "\(mapped.stdout)")
        #expect(mapped.stdout.contains("password="))
        let other = try git.run(["credential", "fill"], stdin: "protocol=https\nhost=other.example\n\n")
        #expect(
            other.stdout.contains("username=someone\npassword=other-secret"), "the next helper must answer other hosts: \(other.stdout)")

        // Directly: an unmapped host, e.g. a malicious remote in a cloned repository.
        let unmapped = try await world.authkit(["credential", "git", "get"], stdin: "protocol=https\nhost=evil.example\n\n")
        #expect(unmapped.status == 0 && unmapped.stdout.isEmpty, "\(unmapped.stdout) \(unmapped.stderr)")
        // Why nothing: AUTHKIT_LOG=debug says that no mapping matched (and which one did).
        let why = try await world.authkit(
            ["credential", "git", "get"], environment: ["AUTHKIT_LOG": "debug"], stdin: "protocol=https\nhost=evil.example:9999\n\n")
        #expect(
            why.stdout.isEmpty && why.stderr.contains("no [credential] mapping") && why.stderr.contains("https://evil.example:9999"),
            "\(why.stderr)")
        let matched = try await world.authkit(
            ["credential", "git", "get"], environment: ["AUTHKIT_LOG": "debug"], stdin: "protocol=http\nhost=\(host)\n\n")
        #expect(matched.stderr.contains("[credential \"\(git.url)\"]"), "\(matched.stderr)")
        try git.run(["clone", "-q", git.url + "/repo.git", world.scratch.appendingPathComponent("bare-clone").path])
        try await world.assertNoSecretsLeaked()
    }

    /// Protocol details the real git 2.39 cannot show, and every bad input.
    @Test func protocolDetailsAndBadInput() async throws {
        let world = try await CLIHarness.start()
        defer { world.stop() }
        try await world.signIn(user: "ada")
        let flags = ["credential", "git", "--group", world.group]
        // git ≥ 2.46 announces authtype: a Bearer credential instead of Basic.
        let bearer = try await world.authkit(
            flags + ["get"], stdin: "capability[]=authtype\nprotocol=https\nhost=dev.azure.com\nwwwauth[]=Bearer realm=x\n\n")
        #expect(bearer.status == 0, "\(bearer.stderr)")
        let lines = bearer.stdout.split(separator: "\n").map(String.init)
        #expect(
            lines.count == 5 && lines[0] == "capability[]=authtype" && lines[1] == "authtype=Bearer" && lines[2].hasPrefix("credential="))
        // Not to be stored by a helper after authkit (git ≥ 2.46's ephemeral).
        #expect(lines[3] == "ephemeral=1" && lines[4].hasPrefix("password_expiry_utc="))
        let token = String(lines[2].dropFirst("credential=".count))
        // store: nothing; erase with another password: nothing; the token still served.
        let store = try await world.authkit(flags + ["store"], stdin: "protocol=https\nhost=x\nusername=oauth2\npassword=\(token)\n\n")
        #expect(store.status == 0 && store.stdout.isEmpty)
        let eraseOther = try await world.authkit(flags + ["erase"], stdin: "protocol=https\nhost=x\nusername=oauth2\npassword=not-ours\n\n")
        #expect(eraseOther.status == 0 && eraseOther.stdout.isEmpty)
        let again = try await world.authkit(flags + ["get"], stdin: "protocol=https\nhost=x\n\n")
        #expect(again.stdout.contains("password=\(token)\n"), "an erase of a foreign password changed the token")
        // Plain http to another machine: no token (it would cross the network in the clear),
        // and one line that says so; git asks its next helper.
        let plain = try await world.authkit(flags + ["get"], stdin: "protocol=http\nhost=git.example.com\n\n")
        #expect(plain.status == 0 && plain.stdout.isEmpty, "\(plain.stdout)")
        #expect(plain.stderr.contains("use https") && plain.stderr.split(separator: "\n").count == 1, "\(plain.stderr)")
        // Nor does setup write a mapping that would never be served.
        for arguments in [
            ["setup", "git", "--host", "http://git.example.com", "--print"],
            ["setup", "git", "--host", "https://git.example.com/?x", "--print"],
            ["setup", "cargo", "--registry", "r", "--index", "sparse+https://evil.example?@cargo.example.com/", "--print"],
            ["setup", "cargo", "--registry", "r", "--index", "sparse+http://cargo.example.com/", "--print"],
        ] {
            let refused = try await world.authkit(arguments)
            #expect(refused.status == 2 && refused.stderr.contains("http only on loopback"), "\(arguments): \(refused.stderr)")
        }
        // Bad input: one line on stderr, non-zero, nothing on stdout, the sign-in usable after.
        let megabyte = String(repeating: "a", count: 1 << 20)
        for (what, arguments, input) in [
            ("unknown action", flags + ["fetch"], "protocol=https\nhost=x\n\n"),
            ("a 1 MB line", flags + ["get"], "protocol=https\nhost=\(megabyte)\n\n"),
            ("a NUL byte", flags + ["get"], "protocol=https\nhost=x\u{0}y\n\n"),
            ("a line without =", flags + ["get"], "protocol https\n\n"),
        ] {
            let result = try await world.authkit(arguments, stdin: input)
            #expect(result.status != 0, "\(what) was accepted")
            #expect(result.stdout.isEmpty, "\(what): stdout \(result.stdout)")
            #expect(result.stderr.split(separator: "\n").count <= 2, "\(what): \(result.stderr)")
        }
        // Run by hand on a terminal, a plug-in never reads it: one line, at once.
        let tty = try await ProcessRunner.run(
            URL(fileURLWithPath: "/usr/bin/script"),
            ["-qec", "\(TestPaths.product("authkit").path) credential git --group \(world.group) get", "/dev/null"],
            environment: world.environment, timeout: 20)
        #expect(!tty.timedOut && tty.status != 0, "a plug-in waited on the terminal")
        #expect(tty.stdout.contains("standard input, which is a terminal"), "\(tty.stdout)")
        // No blank line (EOF ends the request): fine.
        #expect(try await world.authkit(flags + ["get"], stdin: "protocol=https\nhost=x").status == 0)
        // Debug logging never reaches stdout.
        let debug = try await world.authkit(flags + ["get"], environment: ["AUTHKIT_LOG": "debug"], stdin: "protocol=https\nhost=x\n\n")
        #expect(
            debug.stdout.split(separator: "\n").allSatisfy {
                $0.hasPrefix("username=") || $0.hasPrefix("password=") || $0.hasPrefix("password_expiry_utc=")
            })
        #expect(try await world.authkit(["token", "--group", world.group]).status == 0)
        try await world.assertNoSecretsLeaked()
    }
}
