import Foundation
import TestSupport
import Testing

/// Kubectl: Debian's kubectl 1.20 (v1beta1, unpacked by the bootstrap) and any newer
/// kubectl on PATH (v1), configured by `authkit setup kubectl`, against a TLS API-server
/// stand-in that takes only the provider's live tokens.
@Suite struct KubectlCredentialTests {
    /// The kubectl binaries to test with: Debian's 1.20 and a newer one on PATH, if any.
    static func kubectls() -> [URL] {
        var found: [URL] = []
        let debian = TestPaths.packageRoot.appendingPathComponent(".build-tools/kubernetes-client/usr/bin/kubectl")
        if FileManager.default.isExecutableFile(atPath: debian.path) { found.append(debian) }
        for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":") {
            let candidate = URL(fileURLWithPath: String(directory)).appendingPathComponent("kubectl")
            if FileManager.default.isExecutableFile(atPath: candidate.path),
                candidate.resolvingSymlinksInPath() != debian.resolvingSymlinksInPath()
            {
                found.append(candidate)
                break
            }
        }
        return found
    }

    // With and without the agent: the same answers either way.
    @Test(arguments: [false, true])
    func kubectlGetsAccessAndIDTokensThroughTheExecPlugin(agent: Bool) async throws {
        let kubectls = Self.kubectls()
        try #require(!kubectls.isEmpty, "no kubectl: run ./scripts/bootstrap (it unpacks Debian's kubernetes-client)")
        let world = try await CLIHarness.start(agent: agent)
        defer { world.stop() }
        try await world.signIn(user: "ada")
        let api = try KubeAPIServerStandIn(acceptTokensFrom: world.provider, idTokenAudience: CLIHarness.clientID, directory: world.scratch)
        defer { api.stop() }

        for kubectl in kubectls {
            let kubeconfig = world.scratch.appendingPathComponent("kubeconfig-\(kubectls.firstIndex(of: kubectl) ?? 0)")
            let original = """
                apiVersion: v1
                kind: Config
                clusters:
                - cluster:
                    certificate-authority: \(api.certificate.path)
                    server: \(api.server)
                  name: test
                contexts:
                - context:
                    cluster: test
                    user: ada
                  name: test
                current-context: test
                users:
                - name: ada
                  user:
                    token: static-old-token

                """
            try original.write(to: kubeconfig, atomically: false, encoding: .utf8)
            var environment = world.environment
            environment["KUBECONFIG"] = kubeconfig.path
            environment["PATH"] = kubectl.deletingLastPathComponent().path + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
            environment["HOME"] = world.scratch.path

            for type in ["access-token", "id-token"] {
                let setup = try await world.authkit(
                    ["setup", "kubectl", "--context", "test", "--group", world.group, "--token-type", type], environment: environment)
                #expect(setup.status == 0, "\(kubectl.path): \(setup.stderr)")
                // An old static token would be sent instead of the sign-in's: it goes, and
                // setup says so (without showing it).
                #expect(!(try String(contentsOf: kubeconfig, encoding: .utf8)).contains("static-old-token"))
                #expect(!setup.stderr.contains("static-old-token"))
                if type == "access-token" { #expect(setup.stderr.contains("removed the static token of user ada"), "\(setup.stderr)") }
                let get = try await ProcessRunner.run(kubectl, ["get", "--raw", "/api"], environment: environment, timeout: 60)
                #expect(get.status == 0, "\(kubectl.path) with \(type): \(get.stderr)")
                #expect(get.stdout.contains("APIVersions"))
            }
            let written = try String(contentsOf: kubeconfig, encoding: .utf8)
            #expect(written.contains("client.authentication.k8s.io/"), "\(written)")
            #expect(written.contains(api.server) && written.contains("current-context: test"), "the rest of the kubeconfig must stay")
            // Bound to the context's API server, which this kubectl tells the plug-in: a
            // context of another cluster naming the same user (as a kubeconfig merged from
            // another file can) gets no token.
            // (Debian's kubectl 1.20 cannot write provideClusterInfo: there, setup says the
            // plug-in is not bound, and any context naming the user gets the token.)
            let binds = try await ProcessRunner.run(kubectl, ["config", "set-credentials", "--help"]).stdout.contains(
                "--exec-provide-cluster-info")
            #expect(written.contains("provideClusterInfo: true") == binds && written.contains("- --server") == binds, "\(written)")
            guard binds else { continue }
            for (key, value) in [
                ("clusters.other.server", "https://127.0.0.1:9"), ("contexts.other.cluster", "other"), ("contexts.other.user", "ada"),
            ] {
                #expect(try await ProcessRunner.run(kubectl, ["config", "set", key, value], environment: environment).status == 0)
            }
            let other = try await ProcessRunner.run(
                kubectl, ["--context", "other", "get", "--raw", "/api"], environment: environment, timeout: 60)
            #expect(other.status != 0 && other.stderr.contains("no token given"), "\(kubectl.path): \(other.stderr)")
            // A cluster over plain http beyond loopback is not set up at all.
            #expect(
                try await ProcessRunner.run(
                    kubectl, ["config", "set", "clusters.other.server", "http://cluster.example.test"], environment: environment
                )
                .status == 0)
            let plain = try await world.authkit(["setup", "kubectl", "--context", "other", "--print"], environment: environment)
            #expect(plain.status == 2 && plain.stderr.contains("a token goes only over https"), "\(plain.stderr)")
            // Set up for a second context that shares the user, the plug-in answers for both
            // servers: the first context keeps working.
            #expect(
                try await ProcessRunner.run(
                    kubectl, ["config", "set", "clusters.other.server", "https://127.0.0.2:9"], environment: environment
                )
                .status == 0)
            let second = try await world.authkit(
                ["setup", "kubectl", "--context", "other", "--group", world.group], environment: environment)
            #expect(second.status == 0, "\(second.stderr)")
            let both = try String(contentsOf: kubeconfig, encoding: .utf8)
            #expect(both.contains("- " + api.server) && both.contains("- https://127.0.0.2:9"), "\(both)")
            let first = try await ProcessRunner.run(
                kubectl, ["--context", "test", "get", "--raw", "/api"], environment: environment, timeout: 60)
            #expect(first.status == 0 && first.stdout.contains("APIVersions"), "\(first.stderr)")
            #expect(try await ProcessRunner.run(kubectl, ["config", "use-context", "test"], environment: environment).status == 0)
        }
        #expect(try String(contentsOf: world.scratch.appendingPathComponent("kubeconfig-0"), encoding: .utf8).contains("id-token"))

        // An expired access token: the plug-in refreshes (once) and kubectl goes on. (Counted
        // from before setup: Google Cloud SDK's kubectl, a dispatcher, may ask the API server
        // for its version during `kubectl config`, which runs the plug-in first.)
        try TerminalSafetyTests.tamper(world, account: "ada@example.test") {
            $0["access_token_expires_at"] = Date().timeIntervalSince1970 - 10
        }
        // The agent hands out what it read for up to a second (AgentStateMachine's recheck
        // interval) before reading the store again: past that, it sees the expired token.
        if agent { try await Task.sleep(for: .seconds(1.5)) }
        try await world.provider.clearLog()
        let kubeconfig = world.scratch.appendingPathComponent("kubeconfig-0")
        var environment = world.environment
        environment["KUBECONFIG"] = kubeconfig.path
        environment["HOME"] = world.scratch.path
        let setupEnvironment = environment.merging(["PATH": kubectls[0].deletingLastPathComponent().path + ":/usr/bin:/bin"]) { $1 }
        let setup = try await world.authkit(
            ["setup", "kubectl", "--context", "test", "--group", world.group], environment: setupEnvironment)
        #expect(setup.status == 0)
        // --print checks what the real run checks: an unknown context is the same error.
        let printed = try await world.authkit(["setup", "kubectl", "--context", "test", "--print"], environment: setupEnvironment)
        #expect(
            printed.status == 0 && printed.stdout.hasPrefix("# user ada of context test\nexec:\n"), "\(printed.stdout) \(printed.stderr)")
        // kubectl splits each --exec-arg at its commas: such a value is refused, not split.
        for extra in [["--print"], []] {
            let commas = try await world.authkit(
                ["setup", "kubectl", "--context", "test", "--scope", "a,b"] + extra, environment: setupEnvironment)
            #expect(commas.status == 2 && commas.stderr.contains("splits --exec-arg at commas"), "\(commas.stderr)")
        }
        #expect(!(try String(contentsOf: kubeconfig, encoding: .utf8)).contains("- a\n"))
        let unknown = try await world.authkit(["setup", "kubectl", "--context", "nosuch", "--print"], environment: setupEnvironment)
        #expect(
            unknown.status == 2 && unknown.stdout.isEmpty && unknown.stderr.contains("kubectl knows no context")
                && unknown.stderr.contains("nosuch"), "\(unknown.stderr)")
        let refreshed = try await ProcessRunner.run(kubectls[0], ["get", "--raw", "/api"], environment: environment, timeout: 60)
        #expect(refreshed.status == 0, "\(refreshed.stderr)")
        let grants = try await world.provider.log().grantTypes
        #expect(grants["refresh_token", default: 0] == 1, "\(grants)")

        // Not signed in: kubectl shows authkit's one line naming the login.
        #expect(try await world.authkit(["logout", "--group", world.group]).status == 0)
        let refused = try await ProcessRunner.run(kubectls[0], ["get", "--raw", "/api"], environment: environment, timeout: 60)
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("authkit login"), "\(refused.stderr)")
        try await world.assertNoSecretsLeaked()
    }

    /// What the real kubectl here cannot show: v1 with interactive, bad KUBERNETES_EXEC_INFO,
    /// an unknown apiVersion, and standard output holding nothing but the answer.
    @Test func protocolDetailsAndBadInput() async throws {
        let world = try await CLIHarness.start()
        defer { world.stop() }
        try await world.signIn(user: "ada")
        let plugin = ["credential", "kubectl", "--group", world.group]
        for version in ["client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1"] {
            let info = #"{"kind":"ExecCredential","apiVersion":"\#(version)","spec":{"interactive":true}}"#
            let result = try await world.authkit(plugin, environment: ["KUBERNETES_EXEC_INFO": info, "AUTHKIT_LOG": "debug"])
            #expect(result.status == 0, "\(result.stderr)")
            let answer = try CLIOutput.jsonObject(result.stdout)
            #expect(answer["apiVersion"] as? String == version && answer["kind"] as? String == "ExecCredential")
            let status = try #require(answer["status"] as? [String: Any])
            #expect((status["token"] as? String)?.isEmpty == false)
            #expect((status["expirationTimestamp"] as? String)?.hasSuffix("Z") == true)
            #expect(result.stdout.split(separator: "\n").count == 1, "stdout must be the answer only")
        }
        // --token-type id-token: the verified id_token (a JWT for the client), not the access token.
        let id = try await world.authkit(plugin + ["--token-type", "id-token"])
        let idToken = try #require((try CLIOutput.jsonObject(id.stdout))["status"] as? [String: Any])["token"] as? String
        #expect(idToken?.split(separator: ".").count == 3)
        let issuedIDTokens = try await world.provider.issued()["items"].array.filter { $0["kind"] == "id_token" }.compactMap {
            $0["value"].string
        }
        #expect(idToken.map(issuedIDTokens.contains) == true, "an id_token the provider issued")
        let bare = try await world.authkit(plugin)
        #expect((try CLIOutput.jsonObject(bare.stdout))["apiVersion"] as? String == "client.authentication.k8s.io/v1beta1")
        for (what, info) in [
            ("not JSON", "{not json"), ("unknown apiVersion", #"{"apiVersion":"client.authentication.k8s.io/v2"}"#),
            ("no apiVersion", "{}"),
        ] {
            let result = try await world.authkit(plugin, environment: ["KUBERNETES_EXEC_INFO": info])
            #expect(result.status == 2, "\(what): \(result.status)")
            #expect(result.stdout.isEmpty && result.stderr.split(separator: "\n").count == 1, "\(what): \(result.stderr)")
        }
        #expect(try await world.authkit(["token", "--group", world.group]).status == 0, "the sign-in is still usable")
        try await world.assertNoSecretsLeaked()
    }

    /// Bound to one API server (`--server`), the plug-in answers only for it: the same URL up to
    /// the case of its scheme and host and a trailing `/`; another server, or none named, gets
    /// one line and no token.
    @Test func boundToOneServer() async throws {
        let world = try await CLIHarness.start()
        defer { world.stop() }
        try await world.signIn(user: "ada")
        let plugin = ["credential", "kubectl", "--group", world.group, "--server", "https://aks.example.test:443/"]
        func info(_ cluster: String) -> String {
            #"{"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1","spec":{"interactive":false\#(cluster)}}"#
        }
        let same = try await world.authkit(
            plugin, environment: ["KUBERNETES_EXEC_INFO": info(#","cluster":{"server":"HTTPS://AKS.example.test:443","config":null}"#)])
        #expect(same.status == 0, "\(same.stderr)")
        #expect(((try CLIOutput.jsonObject(same.stdout))["status"] as? [String: Any])?["token"] is String)
        for (what, cluster, words) in [
            ("another server", #","cluster":{"server":"https://evil.example.test:443"}"#, "evil.example.test"),
            ("another path", #","cluster":{"server":"https://aks.example.test:443/other"}"#, "/other"),
            ("no cluster information", "", "provideClusterInfo"),
        ] {
            let result = try await world.authkit(plugin, environment: ["KUBERNETES_EXEC_INFO": info(cluster)])
            #expect(result.status == 2, "\(what): \(result.status) \(result.stderr)")
            #expect(result.stdout.isEmpty && result.stderr.split(separator: "\n").count == 1, "\(what): \(result.stderr)")
            #expect(result.stderr.contains(words), "\(what): \(result.stderr)")
        }
        // One user entry shared by contexts of several clusters: bound to each of their servers.
        let two = try await world.authkit(
            plugin + ["--server", "https://stage.example.test"],
            environment: ["KUBERNETES_EXEC_INFO": info(#","cluster":{"server":"https://stage.example.test/"}"#)])
        #expect(two.status == 0, "\(two.stderr)")
        // A refusal names the servers without their user info (a password, perhaps).
        let secret = try await world.authkit(
            plugin, environment: ["KUBERNETES_EXEC_INFO": info(#","cluster":{"server":"https://kim:hunter2@evil.example.test"}"#)])
        #expect(
            secret.status == 2 && !secret.stderr.contains("hunter2") && secret.stderr.contains("https://evil.example.test"),
            "\(secret.stderr)")
        // A server over plain http (beyond loopback) gets no token, bound or not: kubectl would
        // send it in clear text.
        let unbound = ["credential", "kubectl", "--group", world.group]
        for (server, status) in [
            ("http://aks.example.test:80", Int32(2)), ("http://127.0.0.1:8080", 0), ("http://[::1]:8080", 0), ("https://x.test", 0),
        ] {
            let result = try await world.authkit(
                unbound, environment: ["KUBERNETES_EXEC_INFO": info(#","cluster":{"server":"\#(server)"}"#)])
            #expect(result.status == status, "\(server): \(result.stderr)")
            if status != 0 { #expect(result.stdout.isEmpty && result.stderr.contains("not an https URL"), "\(result.stderr)") }
        }
        try await world.assertNoSecretsLeaked()
    }
}
