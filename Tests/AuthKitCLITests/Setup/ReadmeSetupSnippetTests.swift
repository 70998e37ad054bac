import Foundation
import TestSupport
import Testing

/// The README's setup snippets ("Use it from git, docker, podman, kubectl, cargo, AWS, Google
/// Cloud and anything else") are run as written — same text — in a scratch HOME, with the
/// clients' files there, and must succeed and write what the README says; and its install
/// lines work on an empty HOME.
@Suite struct ReadmeSetupSnippetTests {
    /// Every `authkit setup …` command of the section's sh blocks, continuation lines joined.
    static func snippets() throws -> [String] {
        let readme = try String(contentsOf: TestPaths.packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
        let title = "## Use it from git, docker, podman, kubectl, cargo, AWS, Google Cloud and anything else"
        let start = try #require(readme.range(of: title))
        let section = readme[start.upperBound...].prefix { _ in true }
        let end = section.range(of: "\n## ")?.lowerBound ?? section.endIndex
        var commands: [String] = []
        var inBlock = false, current = ""
        for line in section[..<end].split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("```") { inBlock = line == "```sh"; continue }
            guard inBlock else { continue }
            current += line.trimmingCharacters(in: .whitespaces)
            if current.hasSuffix("\\") { current = String(current.dropLast()); continue }
            if current.hasPrefix("authkit setup ") { commands.append(current) }
            current = ""
        }
        return commands
    }

    @Test func theSetupSnippetsRunAsWritten() async throws {
        let commands = try Self.snippets()
        #expect(commands.count == 8, "\(commands)")
        let world = try await CLIHarness.start()
        defer { world.stop() }
        let kubeconfig = world.scratch.appendingPathComponent("kubeconfig")
        var contexts = ""
        for name in ["aks-prod", "oidc-cluster"] {
            contexts += "- context: {cluster: c, user: \(name)-user}\n  name: \(name)\n"
        }
        try
            "apiVersion: v1\nkind: Config\nclusters:\n- cluster: {server: \"https://127.0.0.1:1\"}\n  name: c\ncontexts:\n\(contexts)users:\n- name: aks-prod-user\n  user: {}\n- name: oidc-cluster-user\n  user: {}\n"
            .write(to: kubeconfig, atomically: false, encoding: .utf8)
        var environment = [
            "HOME": world.scratch.path, "GIT_CONFIG_GLOBAL": world.scratch.appendingPathComponent("gitconfig").path,
            "DOCKER_CONFIG": world.scratch.appendingPathComponent("docker").path, "KUBECONFIG": kubeconfig.path,
            "AUTHKIT_CONFIG": world.scratch.appendingPathComponent("authkit.conf").path,
        ]
        let debianKubectl = TestPaths.packageRoot.appendingPathComponent(".build-tools/kubernetes-client/usr/bin")
        environment["PATH"] = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin") + ":" + debianKubectl.path
        for command in commands {
            var words = try Self.words(command)
            #expect(words.removeFirst() == "authkit")
            if words[1] == "docker" || words[1] == "podman" { words += ["--link-dir", world.scratch.path] }
            let result = try await world.authkit(words, environment: environment)
            #expect(result.status == 0, "`\(command)`: \(result.stderr)")
        }
        let config = try String(contentsOfFile: environment["AUTHKIT_CONFIG"]!, encoding: .utf8)
        #expect(
            config.contains(
                "[credential \"https://dev.azure.com\"]\nprofile = microsoft\nscopes = 499b84ac-1321-427f-aa17-267ca6975798/.default"))
        #expect(config.contains("[registry \"registry.example.com\"]\nprofile = work"))
        let git = try String(contentsOfFile: environment["GIT_CONFIG_GLOBAL"]!, encoding: .utf8)
        #expect(git.contains("[credential \"https://dev.azure.com\"]") && git.contains("credential git"))
        let docker = try String(contentsOfFile: environment["DOCKER_CONFIG"]! + "/config.json", encoding: .utf8)
        #expect(docker.contains(#""registry.example.com": "authkit""#))
        let aws = try String(contentsOfFile: world.scratch.path + "/.aws/config", encoding: .utf8)
        #expect(aws.contains("[profile dev]\ncredential_process = ") && aws.contains("--group com.example.shared"), "\(aws)")
        let cargo = try String(contentsOfFile: world.scratch.path + "/.cargo/config.toml", encoding: .utf8)
        #expect(cargo.contains("[registries.internal]"), "\(cargo)")
        let kube = try String(contentsOf: kubeconfig, encoding: .utf8)
        #expect(kube.contains("6dae42f8-4368-4678-94ff-3960e28e3630/.default") && kube.contains("id-token"))
    }

    /// The README's install lines ("Install"), run by bash as written on an account whose HOME
    /// is empty (no ~/.local/bin yet), with the debug build standing in for
    /// `scripts/build-release` (a release build takes minutes) and the lean client's: authkit and
    /// its two links land in ~/.local/bin and run, the links through the lean client.
    @Test func theInstallLinesWorkOnAFreshAccount() throws {
        let readme = try String(contentsOf: TestPaths.packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
        let start = try #require(readme.range(of: "\n## Install\n"))
        // The section's first block is the package's; the lines that build from source are the
        // block that runs scripts/build-release.
        let built = "\"$(scripts/build-release)\""
        var section = readme[start.upperBound...]
        var lines = ""
        while let open = section.range(of: "```sh\n"), let close = section[open.upperBound...].range(of: "```") {
            lines = String(section[open.upperBound..<close.lowerBound])
            if lines.contains(built) { break }
            section = section[close.upperBound...]
        }
        try #require(lines.contains(built), "the install lines build with scripts/build-release: \(lines)")
        let product = TestPaths.product("authkit").path
        let lean = "\"$(scripts/build-lean release)\""
        try #require(lines.contains(lean), "the install lines build the lean client: \(lines)")
        let script = lines.replacingOccurrences(of: built, with: "'\(product)'").replacingOccurrences(
            of: lean, with: "'\(TestPaths.product("authkit-lean").path)'")
        let home = try TestPaths.makeTemporaryDirectory(prefix: "authkit-fresh-home")
        defer { try? FileManager.default.removeItem(at: home) }
        let result = try ProcessRunner.run(
            URL(fileURLWithPath: "/bin/bash"), ["-euo", "pipefail", "-c", "cd '\(TestPaths.packageRoot.path)'\n" + script],
            environment: ["HOME": home.path, "PATH": "/usr/bin:/bin"], timeout: 60)
        #expect(result.status == 0, "the README's install lines on an empty HOME: \(result.stderr)")
        let bin = home.appendingPathComponent(".local/bin")
        for name in ["authkit", "git-credential-authkit", "docker-credential-authkit"] {
            #expect(FileManager.default.isExecutableFile(atPath: bin.appendingPathComponent(name).path), "\(name) in ~/.local/bin")
        }
        // git's plug-in is the lean client, which finds authkit through ~/.local/lib/authkit/authkit.
        let linked = try FileManager.default.destinationOfSymbolicLink(atPath: bin.appendingPathComponent("git-credential-authkit").path)
        #expect(linked == "../lib/authkit/authkit-lean")
        let handed = try ProcessRunner.run(
            home.appendingPathComponent(".local/lib/authkit/authkit-lean"), ["--version"], environment: ["HOME": home.path], timeout: 30)
        let direct = try ProcessRunner.run(
            bin.appendingPathComponent("authkit"), ["--version"], environment: ["HOME": home.path], timeout: 30)
        #expect(handed.status == 0 && handed.stdout == direct.stdout && !direct.stdout.isEmpty, "\(handed.stderr)")
        let help = try ProcessRunner.run(bin.appendingPathComponent("authkit"), ["--help"], environment: ["HOME": home.path], timeout: 30)
        #expect(help.status == 0 && help.stdout.contains("USAGE"), "\(help.stderr)")
    }

    /// Splits a shell command line of plain words (the README's snippets use no quoting).
    static func words(_ command: String) throws -> [String] {
        try #require(!command.contains("'") && !command.contains("\""), "quoting in a README snippet: \(command)")
        return command.split(separator: " ").map(String.init)
    }
}
