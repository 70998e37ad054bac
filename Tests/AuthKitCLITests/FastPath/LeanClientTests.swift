import AuthKitCore
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

    /// The built lean client and a world with an agent and a sign-in (stop it when done).
    static func signedInWorld() async throws -> (lean: URL, world: CLIHarness) {
        let lean = try await offThePool { try LeanClient.build() }
        let world = try await CLIHarness.start(agent: true)
        do { try await world.signIn() } catch {
            world.stop()
            throw error
        }
        return (lean, world)
    }

    /// A copy of the lean client in the world's folder `name`: alone there, whatever it hands
    /// over fails to start, unless the test puts an `authkit` beside it.
    static func copy(_ lean: URL, to name: String, in world: CLIHarness, as program: String = "authkit-lean") throws -> URL {
        let folder = world.scratch.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let copy = folder.appendingPathComponent(program)
        try FileManager.default.copyItem(at: lean, to: copy)
        return copy
    }

    /// `arguments` handed to authkit: through the lean client beside it, authkit's exit code,
    /// standard output (`steadyOutput`: its numbers aside) and standard error (its numbers
    /// aside); through the copy `alone`, which cannot start authkit, exit 2 and nothing else
    /// (but the `greeting` a plug-in says before it reads the request).
    static func expectHandedOver(
        _ arguments: [String], environment: [String: String] = [:], stdin: String? = nil, steadyOutput: Bool = false, alone: URL,
        in world: CLIHarness, title: String? = nil, greeting: String = ""
    ) async throws {
        let expected = try await world.authkit(arguments, environment: environment, stdin: stdin)
        let got = try await world.lean(arguments, environment: environment, stdin: stdin)
        let title = title ?? arguments.joined(separator: " ") + " \(environment) \((stdin ?? "").prefix(40).debugDescription)"
        #expect(got.status == expected.status, "\(title): \(got.status) \(got.stderr)")
        #expect(steadyOutput ? Self.steady(got.stdout) == Self.steady(expected.stdout) : got.stdout == expected.stdout, "\(title)")
        #expect(Self.steady(got.stderr) == Self.steady(expected.stderr), "\(title)")
        let lone = try await world.lean(arguments, copy: alone, environment: environment, stdin: stdin)
        #expect(lone.status == 2 && lone.stdout == greeting && lone.stderr.contains("cannot run authkit at"), "\(title): \(lone.stderr)")
    }

    @Test func servesTheAgentsTokenItselfAndHandsTheRestToAuthkit() async throws {
        let (lean, world) = try await Self.signedInWorld()
        defer { world.stop() }
        let alone = try Self.copy(lean, to: "alone", in: world)

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
            // (--json: numbers only change with the clock, not the words: "59 min", "1 h 0 min".)
            (["status", "--group", world.group, "--json"], [:]),
            (token + ["--json"], [:]),
            (token + ["--min-ttl", "86400"], ["AUTHKIT_AGENT": "off"]),  // no agent, and a refresh due: authkit's
            (["token", "--group", "com.example.nobody"], [:]),  // the agent's refusal
        ]
        for (arguments, environment) in handedOver {
            try await Self.expectHandedOver(arguments, environment: environment, steadyOutput: true, alone: alone, in: world)
        }
        // authkit beside it that is the lean client itself (a link): refused, never run forever.
        let looped = try Self.copy(lean, to: "looped", in: world)
        try FileManager.default.createSymbolicLink(
            atPath: looped.deletingLastPathComponent().appendingPathComponent("authkit").path, withDestinationPath: "authkit-lean")
        let loop = try await world.lean(["token", "--bogus"], copy: looped)
        #expect(loop.status == 2 && loop.stderr.contains("it is this program"), "\(loop.status) \(loop.stderr)")
        #expect(try await world.assertNoSecretsLeaked() > 0)
    }

    @Test func kubectlsPlugInIsAnsweredAsAuthkitAnswersIt() async throws {
        let (lean, world) = try await Self.signedInWorld()
        defer { world.stop() }
        let alone = try Self.copy(lean, to: "alone", in: world)
        let server = "https://kube.example:6443"
        func info(_ server: String, _ version: String = "client.authentication.k8s.io/v1") -> [String: String] {
            ["KUBERNETES_EXEC_INFO": #"{"apiVersion":"\#(version)","kind":"ExecCredential","spec":{"cluster":{"server":"\#(server)"}}}"#]
        }
        let plugin = ["credential", "kubectl", "--group", world.group, "--server", server]

        // Answered by the lean client itself: authkit's ExecCredential, byte for byte.
        for (arguments, environment) in [
            (plugin, info(server)), (Array(plugin.prefix(4)), [:]), (plugin, info(server + "/", "client.authentication.k8s.io/v1beta1")),
        ] {
            let expected = try await world.authkit(arguments, environment: environment)
            try #require(expected.status == 0, "\(expected.stderr)")
            #expect(expected.stdout.contains(#""kind":"ExecCredential""#))
            for copy in [nil, alone] {
                let got = try await world.lean(arguments, copy: copy, environment: environment)
                #expect(got.status == 0 && got.stdout == expected.stdout && got.stderr.isEmpty, "\(got.stderr)")
            }
        }
        // Handed to authkit: its words and exit code.
        let handedOver: [([String], [String: String])] = [
            (plugin, info("https://other.example")),  // another cluster's context
            (plugin, [:]),  // kubectl named no server
            (Array(plugin.prefix(4)), info("http://kube.example")),  // a token over plain http
            (Array(plugin.prefix(4)) + ["--token-type", "id-token"], info(server)),
            (Array(plugin.prefix(4)), ["KUBERNETES_EXEC_INFO": "{"]),
        ]
        for (arguments, environment) in handedOver {
            try await Self.expectHandedOver(arguments, environment: environment, alone: alone, in: world)
        }
        #expect(try await world.assertNoSecretsLeaked() > 0)
    }

    @Test func gitsHelperIsAnsweredAsAuthkitAnswersIt() async throws {
        let (lean, world) = try await Self.signedInWorld()
        defer { world.stop() }
        let alone = try Self.copy(lean, to: "alone", in: world)
        let get = ["credential", "git", "--group", world.group, "get"]
        let request = "protocol=https\nhost=git.example\npath=team/repo.git\n\n"

        // Answered by the lean client itself: authkit's answer, byte for byte.
        let served: [([String], String)] = [
            (get, request), (get, "capability[]=authtype\n" + request), (get + ["--username", "ada"], request),
            (get, "protocol=https\r\nhost=git.example\r\n"), (["credential", "git", "store"], request + "password=anything\n"),
            (["credential", "git", "--group", world.group, "store"], ""),
            (["credential", "git", "get"], request),  // no configuration file, so no mapping: nothing
        ]
        for (arguments, input) in served {
            let expected = try await world.authkit(arguments, stdin: input)
            let title = arguments.joined(separator: " ") + " \(input.debugDescription)"
            try #require(expected.status == 0, "\(title): \(expected.stderr)")
            for copy in [nil, alone] {
                let got = try await world.lean(arguments, copy: copy, stdin: input)
                #expect(got.status == 0 && got.stdout == expected.stdout && got.stderr.isEmpty, "\(title): \(got.stderr)")
            }
        }
        #expect(try await world.authkit(get, stdin: request).stdout.contains("password="))
        // Under the name git runs a helper by (`credential.helper = authkit`), with the action alone.
        let named = try Self.copy(lean, to: "named", in: world, as: "git-credential-authkit")
        let byName = try await world.lean(["--group", world.group, "get"], copy: named, stdin: request)
        #expect(try await byName.stdout == world.authkit(get, stdin: request).stdout && byName.status == 0, "\(byName.stderr)")

        // Handed to authkit with the request it read: authkit's words and exit code.
        let handedOver: [([String], String)] = [
            (get, "protocol=http\nhost=git.example\n"),  // refused: plain http
            (get, "protocol=http\nhost=127.0.0.1:8080\n"),  // a loopback test server: answered by authkit
            (get, "protocol https\n"), (get, "protocol=https\nhost=a\u{0}\n"),
            (get, "host=" + String(repeating: "a", count: CredentialInput.maximumLineBytes) + "\n"),
            (get, String(repeating: "x=y\n", count: 20_000)),  // more than a reader takes (and than a pipe holds)
            (["credential", "git", "--group", world.group, "erase"], request + "password=not-ours\n"),
            (["credential", "git", "--group", world.group, "fetch"], request),
            (["credential", "git", "--group", "com.example.nobody", "get"], request),  // the agent's refusal
        ]
        for (arguments, input) in handedOver {
            try await Self.expectHandedOver(arguments, stdin: input, alone: alone, in: world)
        }
        #expect(try await world.authkit(handedOver[1].0, stdin: handedOver[1].1).stdout.contains("password="))
        // Standard input that cannot be read (a directory): handed over as it is; authkit's words.
        let unreadable = try await offThePool {
            try ["authkit", "authkit-lean"].map { program in
                try ProcessRunner.run(
                    URL(fileURLWithPath: "/bin/sh"), ["-c", #"exec "$0" "$@" < /"#, TestPaths.product(program).path] + get,
                    environment: world.environment, timeout: 30)
            }
        }
        #expect(unreadable[0].status == 2 && unreadable[0].stderr.contains("cannot read standard input"), "\(unreadable[0].stderr)")
        #expect(unreadable[1].status == unreadable[0].status && unreadable[1].stderr == unreadable[0].stderr, "\(unreadable[1].stderr)")
        // Part of the request read, then an error: a non-blocking FIFO whose writer (this test)
        // stays open. Both say authkit's words; the lean client cannot hand the rest over.
        let fifo = world.scratch.appendingPathComponent("request.fifo").path
        try #require(mkfifo(fifo, 0o600) == 0)
        let writer = open(fifo, O_RDWR)
        try #require(writer >= 0)
        defer { close(writer) }
        let part = Array("protocol=https\nhost=git.example\n".utf8)
        #expect(write(writer, part, part.count) == part.count)
        let interrupted = try await offThePool {
            try ["authkit", "authkit-lean"].map { program in
                // (Each reads the part the test wrote: it is written again for the second.)
                if program == "authkit-lean" { _ = write(writer, part, part.count) }
                return try ProcessRunner.run(
                    TestPaths.python,
                    [
                        "-c",
                        "import os, sys; fd = os.open(sys.argv[1], os.O_RDONLY | os.O_NONBLOCK); os.dup2(fd, 0); os.execv(sys.argv[2], sys.argv[2:])",
                        fifo, TestPaths.product(program).path,
                    ] + get, environment: world.environment, timeout: 30)
            }
        }
        #expect(interrupted[0].status == 2 && interrupted[0].stderr.contains("cannot read standard input"), "\(interrupted[0].stderr)")
        #expect(interrupted[1].status == 2 && interrupted[1].stderr == interrupted[0].stderr, "\(interrupted[1].stderr)")
        #expect(try await world.assertNoSecretsLeaked() > 0)
    }

    @Test func aConfigurationFileIsReadAsAuthkitReadsIt() async throws {
        let (lean, world) = try await Self.signedInWorld()
        defer { world.stop() }
        let alone = try Self.copy(lean, to: "alone", in: world)
        try FileManager.default.createDirectory(at: world.configDirectory, withIntermediateDirectories: true)
        let config = world.configDirectory.appendingPathComponent("config")
        let profile = """
            [defaults]
            profile = work

            [profile work]
            issuer = \(world.provider.issuer.absoluteString)
            client_id = "\(CLIHarness.clientID)"
            group = \(world.group)
            dpop = never   # bound tokens are not asked for here

            """
        func write(_ text: String, mode: Int = 0o600) throws {
            try text.write(to: config, atomically: false, encoding: .utf8)
            try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: config.path)
        }
        let server = "https://kube.example:6443"
        let info = [
            "KUBERNETES_EXEC_INFO":
                #"{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","spec":{"cluster":{"server":"\#(server)"}}}"#
        ]
        let request = "protocol=https\nhost=git.example\n\n"
        // The profile names the group: answered by the lean client itself, as authkit answers.
        try write(profile + "[credential \"https://git.example\"]\nprofile = work\n\n[group \"\(world.group)\"]\nconfirm = never\n")
        let served: [([String], [String: String], String?)] = [
            (["token"], [:], nil), (["token", "--profile", "work"], [:], nil), (["credential", "kubectl"], info, nil),
            (["credential", "git", "--group", world.group, "get"], [:], request),
            (["credential", "git", "get"], [:], request),  // the host's mapping names the profile
            (["credential", "git", "get"], [:], "protocol=https\nhost=unmapped.example\n"),  // nothing
            (["token"], ["AUTHKIT_CONFIG": config.path, "XDG_CONFIG_HOME": "/nonexistent"], nil),  // the file named outright
        ]
        for (arguments, environment, input) in served {
            let expected = try await world.authkit(arguments, environment: environment, stdin: input)
            try #require(expected.status == 0, "\(arguments): \(expected.stderr)")
            let got = try await world.lean(arguments, copy: alone, environment: environment, stdin: input)
            #expect(got.status == 0 && got.stdout == expected.stdout && got.stderr.isEmpty, "\(arguments): \(got.stderr)")
        }
        // What authkit refuses or warns of: handed to it, its words and exit code.
        let handedOver: [(String, Int)] = [
            (profile.replacingOccurrences(of: "dpop = never", with: "dpop = sometimes"), 0o600),
            (profile + "[profile other]\nbogus = 1\n", 0o600),  // a warning, and the token
            (profile.replacingOccurrences(of: "profile = work", with: "profile = nowhere"), 0o600),
            (profile, 0o622),  // others may write the file
            (profile + "client_secret = s3cret\n", 0o644),  // others may read its secret
            (profile + "[group \"\(world.group)\"]\nconfirm = maybe\n", 0o600),
            (profile.replacingOccurrences(of: "issuer = ", with: "issuer = https://user@a.example/ # was "), 0o600),
        ]
        for (text, mode) in handedOver {
            try write(text, mode: mode)
            try await Self.expectHandedOver(["token"], alone: alone, in: world, title: text)
        }
        // A file named outright that is not there: authkit's error.
        let missing = ["AUTHKIT_CONFIG": config.path + ".missing"]
        let expected = try await world.authkit(["token"], environment: missing)
        let got = try await world.lean(["token"], environment: missing)
        #expect(expected.status != 0 && got.status == expected.status && got.stderr == expected.stderr, "\(got.stderr)")
        #expect(try await world.assertNoSecretsLeaked() > 0)
    }

    @Test func dockersHelperIsAnsweredAsAuthkitAnswersIt() async throws {
        let (lean, world) = try await Self.signedInWorld()
        defer { world.stop() }
        let alone = try Self.copy(lean, to: "alone", in: world)
        // Under the name docker runs it by (`authkit setup docker` makes that link to authkit).
        let named = try Self.copy(lean, to: "named", in: world, as: "docker-credential-authkit")
        try FileManager.default.createDirectory(at: world.configDirectory, withIntermediateDirectories: true)
        try "[registry \"registry.example\"]\ngroup = \(world.group)\nusername = bob\n".write(
            to: world.configDirectory.appendingPathComponent("config"), atomically: false, encoding: .utf8)
        let get = ["credential", "docker", "get"]
        let served: [([String], String, URL)] = [
            (get, "registry.example\n", alone), (["credential", "docker", "--group", world.group, "get"], "any.example\n", alone),
            (["get"], "https://registry.example/v1/\n", named), (get, "other.example\n", alone),  // not mapped: not found, exit 1
            (["credential", "docker", "store"], #"{"ServerURL":"r","Username":"u","Secret":"s"}"#, alone),
            (["erase"], "registry.example\n", named),
        ]
        for (arguments, input, copy) in served {
            let full = arguments.first == "credential" ? arguments : ["credential", "docker"] + arguments
            let expected = try await world.authkit(full, stdin: input)
            let got = try await world.lean(arguments, copy: copy, stdin: input)
            let title = arguments.joined(separator: " ") + " \(input.debugDescription)"
            #expect(
                got.status == expected.status && got.stdout == expected.stdout && got.stderr == expected.stderr, "\(title): \(got.stderr)")
        }
        #expect(try await world.authkit(get, stdin: "registry.example\n").stdout.contains(#""Secret""#))
        // Handed to authkit: its words and exit code.
        let handedOver: [([String], String)] = [
            (["credential", "docker", "list"], ""), (get, "\n"), (get, "registry.example\u{0}\n"),
            (["credential", "docker", "--group", "com.example.nobody", "get"], "registry.example\n"),
        ]
        for (arguments, input) in handedOver {
            try await Self.expectHandedOver(arguments, stdin: input, alone: alone, in: world)
        }
        #expect(try await world.assertNoSecretsLeaked() > 0)
    }

    @Test func withoutAnAgentTheSecretServiceIsReadAsAuthkitReadsIt() async throws {
        let lean = try await offThePool { try LeanClient.build() }
        let world = try await CLIHarness.start()
        defer { world.stop() }
        try await world.signIn()
        let alone = try Self.copy(lean, to: "alone", in: world)
        let token = ["token", "--group", world.group]
        let request = "protocol=https\nhost=git.example\n\n"
        let kubectl = [
            "KUBERNETES_EXEC_INFO":
                #"{"apiVersion":"client.authentication.k8s.io/v1","spec":{"cluster":{"server":"https://kube.example"}}}"#
        ]
        let monitor = try await offThePool { try world.keyring.monitor() }
        try await world.startAgent()
        await world.stopAgent(signal: SIGKILL)
        #expect(FileManager.default.fileExists(atPath: world.agentSocket))
        try Data("not a socket".utf8).write(to: world.scratch.appendingPathComponent("plain-file"))

        // Served from the store by the lean client alone: authkit's output, byte for byte.
        let served: [([String], [String: String], String?)] = [
            (token, [:], nil), (token + ["--min-ttl", "0"], [:], nil), (token + ["--account", "ada@example.test"], [:], nil),
            (token, ["AUTHKIT_AGENT_SOCK": world.scratch.path + "/none.sock"], nil), (token, ["AUTHKIT_AGENT": "off"], nil),
            (token, ["AUTHKIT_AGENT_SOCK": world.agentSocket], nil),  // an agent killed: its socket left, refusing
            (token, ["AUTHKIT_AGENT_SOCK": world.scratch.path + "/plain-file"], nil),  // not a socket at all
            (["credential", "git", "--group", world.group, "get"], [:], request),
            (["credential", "kubectl", "--group", world.group], kubectl, nil),
            (["credential", "docker", "--group", world.group, "get"], [:], "registry.example\n"),
        ]
        for (arguments, environment, input) in served {
            let expected = try await world.authkit(arguments, environment: environment, stdin: input)
            let title = arguments.joined(separator: " ") + " \(environment)"
            try #require(expected.status == 0, "\(title): \(expected.stderr)")
            let got = try await world.lean(arguments, copy: alone, environment: environment, stdin: input)
            #expect(got.status == 0 && got.stdout == expected.stdout && got.stderr.isEmpty, "\(title): \(got.stderr)")
        }
        #expect(try await world.authkit(token).stdout.count > 20)

        // Handed to authkit: a refresh, a narrower token, another account, another store.
        let handedOver: [([String], [String: String])] = [
            (token + ["--min-ttl", "86400"], [:]),  // authkit refreshes, then exits 8
            (token + ["--scope", "openid"], [:]), (token + ["--account", "someone@example.test"], [:]),
            (token + ["--account", "ADA@example.test"], [:]),  // authkit matches it ignoring case
            (["token", "--group", "com.example.nobody"], [:]),
            (token + ["--storage", "kernel-keyring"], [:]),
        ]
        for (arguments, environment) in handedOver {
            try await Self.expectHandedOver(arguments, environment: environment, steadyOutput: true, alone: alone, in: world)
        }
        // Never an unlock, never a dialog (authkit's own runs above included).
        #expect(try await offThePool { try monitor.count("Unlock") + monitor.count("Prompt") } == 0)

        // After reading the store, authkit gets the signal dispositions the lean client was
        // given (GLib ignores SIGPIPE for its sockets): a stand-in shows its own.
        let stand = try Self.copy(lean, to: "stand", in: world)
        let script = stand.deletingLastPathComponent().appendingPathComponent("authkit")
        try "#!/bin/sh\nexec grep SigIgn /proc/self/status\n".write(to: script, atomically: true, encoding: .utf8)
        chmod(script.path, 0o755)
        let direct = try await ProcessRunner.run(script, [], environment: world.environment, timeout: 30)
        let handed = try await ProcessRunner.run(stand, token + ["--min-ttl", "86400"], environment: world.environment, timeout: 30)
        func ignoresSIGPIPE(_ status: String) -> Bool? {
            guard let mask = UInt64(status.dropFirst("SigIgn:".count).trimmingCharacters(in: .whitespacesAndNewlines), radix: 16) else {
                return nil
            }
            return mask & (1 << (UInt64(SIGPIPE) - 1)) != 0
        }
        #expect(ignoresSIGPIPE(direct.stdout) == false && ignoresSIGPIPE(handed.stdout) == false, "\(handed.stdout) \(direct.stdout)")

        // A token git reported rejected (`erase`, after a 401) is stale: never handed out again
        // from the store, authkit refreshes it.
        let get = ["credential", "git", "--group", world.group, "get"]
        let fresh = try await world.lean(get, copy: alone, stdin: request)
        let rejected = String(try #require(fresh.stdout.split(separator: "\n").first { $0.hasPrefix("password=") }))
        let erase = try await world.authkit(
            ["credential", "git", "--group", world.group, "erase"], stdin: request.dropLast() + rejected + "\n\n")
        #expect(erase.status == 0, "\(erase.stderr)")
        let stale = try await world.lean(get, copy: alone, stdin: request)
        #expect(stale.status == 2 && !stale.stdout.contains(rejected), "\(stale.stderr)")
        let renewed = try await world.lean(get, stdin: request)
        #expect(renewed.status == 0 && renewed.stdout.contains("password=") && !renewed.stdout.contains(rejected))

        // A second sign-in in the group: which one is authkit's to choose (its current account).
        try await world.signIn(user: "grace")
        try await Self.expectHandedOver(token, steadyOutput: true, alone: alone, in: world)
        try await Self.expectHandedOver(token + ["--account", "ada@example.test"], steadyOutput: true, alone: alone, in: world)

        // A locked collection: handed over before anything could ask to unlock it.
        try await offThePool { try world.keyring.lockCollection(label: "Login") }
        let before = try await offThePool { try monitor.count("Unlock") + monitor.count("Prompt") }
        let locked = try await world.lean(token, copy: alone)
        #expect(locked.status == 2 && locked.stderr.contains("cannot run authkit at"), "\(locked.stderr)")
        #expect(try await offThePool { try monitor.count("Unlock") + monitor.count("Prompt") } == before)
        #expect(try await world.assertNoSecretsLeaked() > 0)
    }

    /// A provider that owns the name and never answers: the lean client gives up within its
    /// bound and hands over (authkit then waits its own).
    @Test func aProviderThatNeverAnswersIsHandedOverInTime() async throws {
        let lean = try await offThePool { try LeanClient.build() }
        let world = try await CLIHarness.start(keyring: .hung)
        defer { world.stop() }
        let alone = try Self.copy(lean, to: "alone", in: world)
        let started = Date()
        let got = try await world.lean(["token", "--group", world.group], copy: alone)
        #expect(got.status == 2 && got.stdout.isEmpty && got.stderr.contains("cannot run authkit at"), "\(got.stderr)")
        // (5 s, and a busy machine's start-up.)
        #expect(Date().timeIntervalSince(started) < 15)
    }

    /// KeePassXC, a second Secret Service: its item read the same way, and nothing it would ask
    /// a person about.
    @Test func withoutAnAgentKeePassXCIsReadAsAuthkitReadsIt() async throws {
        let lean = try await offThePool { try LeanClient.build() }
        let world = try await CLIHarness.start(keyring: .keepassxc)
        defer { world.stop() }
        try await world.signIn()
        let alone = try Self.copy(lean, to: "alone", in: world)
        let monitor = try await offThePool { try world.keyring.monitor() }
        for arguments in [["token", "--group", world.group], ["credential", "kubectl", "--group", world.group]] {
            let expected = try await world.authkit(arguments)
            try #require(expected.status == 0, "\(expected.stderr)")
            let got = try await world.lean(arguments, copy: alone)
            #expect(got.status == 0 && got.stdout == expected.stdout && got.stderr.isEmpty, "\(got.stderr)")
        }
        #expect(try await offThePool { try monitor.count("Unlock") + monitor.count("Prompt") } == 0)
        #expect(try await world.assertNoSecretsLeaked() > 0)
    }

    /// The agent's events of `group` (`authkit agent log --json`), one JSON object each.
    static func events(_ world: CLIHarness, group: String) async throws -> [String] {
        let log = try await world.authkit(["agent", "log", "--json", "--group", group, "--socket", world.agentSocket])
        try #require(log.status == 0, "\(log.stderr)")
        return log.stdout.split(separator: "\n").map(String.init)
    }

    @Test func aRefusalIsHandedOverAndAuthkitDoesNotAskAgain() async throws {
        let (lean, world) = try await Self.signedInWorld()
        defer { world.stop() }
        let nobody = ["token", "--group", "com.example.nobody"]

        // Through the lean client beside authkit: authkit's words, and the agent asked once.
        let expected = try await world.authkit(nobody)
        #expect(expected.status == 1, "\(expected.stderr)")
        let before = try await Self.events(world, group: "com.example.nobody")
        let got = try await world.lean(nobody)
        #expect(got.status == expected.status && got.stdout.isEmpty && got.stderr == expected.stderr, "\(got.stderr)")
        let after = try await Self.events(world, group: "com.example.nobody")
        #expect(after.count == before.count + 1, "the agent was asked \(after.count - before.count) times: \(after)")

        // In place of authkit, a script that shows what it was given: the same arguments, and
        // the refusal tied to the process (its pid, which execv keeps).
        let copy = try Self.copy(lean, to: "handed", in: world)
        let stand = copy.deletingLastPathComponent().appendingPathComponent("authkit")
        try "#!/bin/sh\nprintf '%s\\n' \"$$\" \"$@\" \"${AUTHKIT_AGENT_ANSWER-none}\"\n".write(to: stand, atomically: true, encoding: .utf8)
        chmod(stand.path, 0o755)
        // (Run outside the world's record: the stand-in's output is no token.)
        let refused = try await ProcessRunner.run(copy, nobody, environment: world.environment, timeout: 30)
        let lines = refused.stdout.split(separator: "\n").map(String.init)
        try #require(lines.count == 5, "\(refused.stdout) \(refused.stderr)")
        #expect(Array(lines[1...3]) == nobody)
        #expect(lines[4].hasPrefix(lines[0] + " {") && lines[4].contains(#""ok":false"#) && lines[4].contains(#""error""#), "\(lines)")
        // A token answer, or anything but a refusal, is never handed over.
        let other = try await ProcessRunner.run(
            copy, ["token", "--group", world.group, "--min-ttl", "86400"], environment: world.environment, timeout: 30)
        #expect(other.stdout.hasSuffix("none\n"), "\(other.stdout)")

        // A refusal handed to another process (an inherited variable) is not taken.
        let plain = try await world.authkit(["token", "--group", world.group])
        #expect(plain.status == 0)
        let inherited = try await world.authkit(["token", "--group", world.group], environment: ["AUTHKIT_AGENT_ANSWER": lines[4]])
        #expect(inherited.status == 0 && inherited.stdout == plain.stdout, "\(inherited.stderr)")
        #expect(try await world.assertNoSecretsLeaked() > 0)
    }

    /// Every `AUTHKIT_` variable authkit's sources read (HelpTextTests' rule) is one the lean
    /// client hands over, one it reads as authkit does, or one no `authkit token` served by the agent or the
    /// Secret Service reads: a new variable needs a decision here.
    @Test func everyVariableAuthkitReadsIsConsidered() throws {
        let read = try HelpTextTests.variablesRead().filter { $0.hasPrefix("AUTHKIT_") && !$0.hasPrefix("AUTHKIT_TEST_") }
        let readByThePlan: Set = [
            "AUTHKIT_GROUP", "AUTHKIT_STORAGE", "AUTHKIT_ACCOUNT", "AUTHKIT_AGENT", "AUTHKIT_AGENT_SOCK", "AUTHKIT_CONFIG",
        ]
        let notOnThatPath: Set = [
            "AUTHKIT_ASKPASS", "AUTHKIT_JOURNAL_SOCKET", "AUTHKIT_SSH",  // the agent's and `authkit ssh`'s
            "AUTHKIT_TOKEN",  // set by exec, not read
            "AUTHKIT_PLUGIN_GREETED",  // set by the lean client itself, for authkit in its own process
            "AUTHKIT_TPM", "AUTHKIT_IDENTITY_FILE",  // a key or store authkit opens itself, not the agent's answer
        ]
        let considered = Set(LeanTokenPlan.handedOffVariables).union(readByThePlan).union(notOnThatPath)
        #expect(
            read.subtracting(considered).isEmpty,
            "read by authkit, not considered by the lean client: \(read.subtracting(considered).sorted())")
        #expect(considered.subtracting(read).isEmpty, "no longer read: \(considered.subtracting(read).sorted())")
    }
}
