import ArgumentParser
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
}
