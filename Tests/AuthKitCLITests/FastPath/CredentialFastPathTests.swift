import ArgumentParser
import AuthKitCore
import Testing
@testable import AuthKitCLI

/// The credential plug-ins' fast path parses exactly as ArgumentParser does, and declines
/// anything unusual.
@Suite("CredentialFastPath")
struct CredentialFastPathTests {
    func parsedByArgumentParser(_ arguments: [String]) throws -> CredentialFlags {
        try #require(try AuthKitCommand.parseAsRoot(arguments) as? any CredentialAdapterCommand).flags
    }

    @Test("one list of adapters drives the subcommands, the executable aliases and setup")
    func oneListDrivesEverything() {
        let clients = CredentialAdapters.all.map { $0.client }
        #expect(clients == ["git", "docker", "kubectl", "cargo", "aws", "gcloud"])
        #expect(CredentialCommand.configuration.subcommands.map { $0.configuration.commandName } == clients)
        // docker's adapter also serves podman (containers-auth.json); the agent is set up too.
        #expect(
            SetupCommand.configuration.subcommands.map { $0.configuration.commandName }
                == ["git", "docker", "podman", "kubectl", "cargo", "aws", "gcloud", "agent"])
        #expect(CredentialAdapters.aliased("docker-credential-authkit")?.client == "docker")
        #expect(CredentialAdapters.aliased("cargo-credential-authkit")?.client == "cargo")
        #expect(CredentialAdapters.aliased("git-credential-authkit")?.client == "git")
        #expect(CredentialAdapters.aliased("authkit") == nil)
    }

    @Test(
        "whatever the fast path accepts, ArgumentParser parses to the same flags",
        arguments: [
            ["credential", "git", "get"],
            ["credential", "git", "--group", "com.example.shared", "erase"],
            ["credential", "git", "--profile=work", "--scope", "a/.default", "--min-ttl", "600", "--username", "me", "get"],
            ["credential", "docker", "get"],
            ["credential", "docker", "--group=g", "--insecure-storage", "list"],
            ["credential", "kubectl"],
            ["credential", "cargo", "--cargo-plugin"],
            ["credential", "cargo", "--group", "g", "--cargo-plugin"],
            ["credential", "kubectl", "--token-type", "id-token", "--account", "ada@example.test"],
            ["credential", "kubectl", "--scope", "6dae42f8-4368-4678-94ff-3960e28e3630/.default", "--min-ttl=0"],
            ["credential", "kubectl", "--server", "https://127.0.0.1:6443", "--token-type=id-token"],
            ["credential", "kubectl", "--server=https://aks.example.test:443"],
            ["credential", "kubectl", "--server", "https://a.test", "--group", "g", "--server=https://b.test"],
        ])
    func agreesWithArgumentParser(_ arguments: [String]) throws {
        let fast = try #require(CredentialFastPath.parse(arguments))
        #expect(fast.flags == (try parsedByArgumentParser(arguments)))
        #expect(fast.client == arguments[1])
    }

    @Test(
        "anything unusual is left to ArgumentParser",
        arguments: [
            ["credential", "git"], ["credential", "git", "--help"], ["credential", "git", "get", "extra"],
            ["credential", "git", "--bogus", "get"],
            ["credential", "kubectl", "get"], ["credential", "kubectl", "--token-type", "x"],
            ["credential", "kubectl", "--server"], ["credential", "kubectl", "--server", "--group"],
            ["credential", "docker", "--username", "u", "get"],
            ["credential", "git", "--min-ttl", "-1", "get"], ["credential"], ["token"], [],
            ["credential", "cargo", "--cargo-plugin", "--cargo-plugin"], ["credential", "git", "--cargo-plugin", "get"],
        ])
    func declines(_ arguments: [String]) {
        #expect(CredentialFastPath.parse(arguments) == nil)
    }

    @Test(
        "the lean client takes kubectl's plug-in options as the fast path does, and declines the rest",
        arguments: [
            ["credential", "kubectl"], ["credential", "kubectl", "--group", "g", "--server", "https://a", "--server=https://b"],
            ["credential", "kubectl", "--token-type=access-token", "--min-ttl", "30", "--account", "ada", "--scope", "s"],
            ["credential", "kubectl", "--resource", "https://api.example", "--storage", "kernel-keyring"],
            ["credential", "kubectl", "--token-type", "id-token"], ["credential", "kubectl", "--token-type", "x"],
            ["credential", "kubectl", "get"], ["credential", "kubectl", "--bogus"], ["credential", "kubectl", "--server"],
            ["credential", "kubectl", "--token-type", "access-token", "--token-type", "access-token"],
        ])
    func leanKubectlAgrees(_ arguments: [String]) throws {
        let lean = LeanTokenPlan.kubectlOptions(arguments)
        guard let (client, flags) = CredentialFastPath.parse(arguments), client == "kubectl", flags.own["--token-type"] == "access-token"
        else {
            #expect(lean == nil, "the lean client takes \(arguments)")
            return
        }
        let (options, servers) = try #require(lean, "the lean client declines \(arguments)")
        #expect(options.selector == flags.selector && options.scopes == flags.scopes && options.resources == flags.resources)
        #expect(options.minTTL == flags.minTTL && servers == flags.ownLists["--server"])
    }

    @Test(
        "the lean client takes git's and docker's helper options as the fast path does, and declines the rest",
        arguments: [
            ["credential", "git", "get"], ["credential", "git", "--group", "g", "get"], ["credential", "git", "store", "--group=g"],
            ["credential", "git", "--username", "ada", "--account", "a", "--scope", "s", "--min-ttl", "30", "erase"],
            ["credential", "git", "--resource", "https://api.example", "--storage", "kernel-keyring", "--profile", "p", "get"],
            ["credential", "git", "--insecure-storage", "get"], ["credential", "git"], ["credential", "git", "get", "store"],
            ["credential", "git", "--bogus", "get"], ["credential", "git", "--username"],
            ["credential", "git", "--username", "a", "--username", "b", "get"],
            ["credential", "git", "--min-ttl", "-1", "get"], ["credential", "git", "--server", "https://a", "get"],
            ["credential", "git", "fetch"], ["credential", "docker", "get"],
            ["credential", "docker", "--group", "g", "--scope", "s", "erase"],
            ["credential", "docker", "--username", "a", "get"], ["credential", "docker"], ["credential", "docker", "list", "get"],
        ])
    func leanGitAndDockerAgree(_ arguments: [String]) throws {
        let own: Set<String> = arguments[1] == "git" ? ["--username"] : []
        let lean = LeanTokenPlan.credentialOptions(arguments, own: own)
        guard let (client, flags) = CredentialFastPath.parse(arguments), client == arguments[1] else {
            #expect(lean == nil, "the lean client takes \(arguments)")
            return
        }
        let (options, action, values) = try #require(lean, "the lean client declines \(arguments)")
        #expect(options.selector == flags.selector && options.scopes == flags.scopes && options.resources == flags.resources)
        #expect(options.minTTL == flags.minTTL && action == flags.action && values == flags.own)
    }

    @Test func theLeanClientsPlugInNamesAreAuthkits() {
        let aliases = CredentialAdapters.all.compactMap { adapter in adapter.executableAlias.map { ($0, adapter.client) } }
        #expect(LeanTokenPlan.credentialAliases == Dictionary(uniqueKeysWithValues: aliases))
    }

    @Test("a server the lean client serves is one authkit's plug-in sends a token to")
    func plainHTTPSIsCarried() throws {
        let alphabet = Array("abcXYZ019.-:/_~%@?#[]")
        var generator = SystemRandomNumberGenerator()
        var accepted = 0
        for _ in 0..<4000 {
            let tail = String((0..<Int.random(in: 0...24, using: &generator)).map { _ in alphabet.randomElement(using: &generator) ?? "a" })
            let server = "https://" + tail
            guard KubectlExecInfo.isPlainHTTPS(server) else { continue }
            accepted += 1
            #expect(throws: Never.self, "\(server)") { try KubectlCredentialAdapter.checkTransport(server) }
        }
        #expect(accepted > 100)
    }
}
