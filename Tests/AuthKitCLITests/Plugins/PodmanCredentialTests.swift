import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// podman, skopeo and buildah read credential helpers from containers-auth.json and speak
/// docker's helper protocol: Debian's skopeo, set up by `authkit setup podman`, against a
/// registry that takes only the provider's live access tokens.
@Suite struct PodmanCredentialTests {
    /// An auth.json kept in a dotfiles folder and linked into place stays linked: setup writes
    /// the file the link names (atomically, beside it), every other key kept.
    @Test func aSymlinkedAuthFileStaysALinkAndItsFileIsWritten() async throws {
        let home = try ConfigurationErrorTests.Home()
        let containers = home.root.appendingPathComponent(".config/containers")
        let dotfiles = home.root.appendingPathComponent("dotfiles")
        let bin = home.root.appendingPathComponent("bin")
        for folder in [containers, dotfiles, bin] { try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true) }
        let target = dotfiles.appendingPathComponent("containers-auth.json")
        try #"{"auths":{"other.example":{"auth":"dXNlcjpwYXNz"}}}"#.write(to: target, atomically: false, encoding: .utf8)
        chmod(target.path, 0o640)
        let link = containers.appendingPathComponent("auth.json")
        try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: "../../dotfiles/containers-auth.json")

        let setup = try await home.authkit([
            "setup", "podman", "--registry", "registry.example.com", "--group", "com.example.team", "--link-dir", bin.path,
        ])
        #expect(setup.status == 0, "\(setup.stderr)")
        #expect(
            (try? FileManager.default.destinationOfSymbolicLink(atPath: link.path)) == "../../dotfiles/containers-auth.json",
            "the link is kept")
        let written = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: target)) as? [String: Any])
        #expect((written["credHelpers"] as? [String: String]) == ["registry.example.com": "authkit"], "\(written)")
        #expect((written["auths"] as? [String: Any])?["other.example"] != nil, "other keys are kept")
        let mode = try FileManager.default.attributesOfItem(atPath: target.path)[.posixPermissions] as? Int
        #expect(mode == 0o640, "the file keeps its mode")
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: dotfiles.path).filter { $0.hasPrefix(".") }
        #expect(leftovers.isEmpty && !FileManager.default.fileExists(atPath: containers.appendingPathComponent(".auth.json.tmp").path))
    }

    @Test(arguments: [false, true])
    func skopeoInspectsAndCopiesWithTheSignInAndAnUnmappedRegistryGetsNothing(agent: Bool) async throws {
        let skopeo = URL(fileURLWithPath: "/usr/bin/skopeo")
        try #require(FileManager.default.isExecutableFile(atPath: skopeo.path), "skopeo is missing: run ./scripts/bootstrap")
        let world = try await CLIHarness.start(agent: agent)
        defer { world.stop() }
        try await world.signIn(user: "ada")
        let mapped = try RegistryStandIn(acceptTokensFrom: world.provider, privateRepositories: ["team"])
        defer { mapped.stop() }
        let unmapped = try RegistryStandIn(acceptTokensFrom: world.provider, privateRepositories: [])
        defer { unmapped.stop() }
        let bin = world.scratch.appendingPathComponent("bin")
        try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
        var environment = world.environment
        environment["PATH"] = bin.path + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
        environment["HOME"] = world.scratch.path
        environment.removeValue(forKey: "REGISTRY_AUTH_FILE")
        let config = try #require(environment["XDG_CONFIG_HOME"])
        let authFile = config + "/containers/auth.json"
        // An auth file of the user's own, kept as it is apart from credHelpers.
        try FileManager.default.createDirectory(atPath: config + "/containers", withIntermediateDirectories: true)
        try #"{"auths":{"other.example":{"auth":"dXNlcjpwYXNz"}},"credHelpers":{"quay.io":"other"}}"#.write(
            toFile: authFile, atomically: false, encoding: .utf8)
        for _ in 0..<2 {
            let setup = try await world.authkit(
                ["setup", "podman", "--registry", mapped.registry, "--group", world.group, "--link-dir", bin.path], environment: environment
            )
            #expect(setup.status == 0, "\(setup.stderr)")
        }
        let written = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: authFile))) as? [String: Any])
        #expect((written["credHelpers"] as? [String: String]) == ["quay.io": "other", mapped.registry: "authkit"])
        #expect((written["auths"] as? [String: Any])?["other.example"] != nil)
        let list = try await world.authkit(["setup", "--list"], environment: environment)
        #expect(list.stdout.contains("podman   set up for \(mapped.registry) (\(authFile))"), "\(list.stdout)")

        let skopeoEnvironment = environment
        func run(_ arguments: [String]) async throws -> ProcessResult {
            let result = try await offThePool { try ProcessRunner.run(skopeo, arguments, environment: skopeoEnvironment, timeout: 60) }
            world.recordExternal("skopeo", arguments, result)
            return result
        }
        let inspect = try await run(["inspect", "--tls-verify=false", "--raw", "docker://\(mapped.registry)/team/app:latest"])
        #expect(inspect.status == 0 && inspect.stdout.contains("schemaVersion"), "\(inspect.stderr)")
        let out = world.scratch.appendingPathComponent("copied")
        let copy = try await run([
            "copy", "--insecure-policy", "--src-tls-verify=false", "docker://\(mapped.registry)/team/app:latest", "dir:\(out.path)",
        ])
        #expect(
            copy.status == 0 && FileManager.default.fileExists(atPath: out.appendingPathComponent("manifest.json").path), "\(copy.stderr)")
        let requests = try await mapped.requests().filter { $0.path.hasPrefix("/v2/team/") }
        #expect(!requests.isEmpty && requests.allSatisfy { $0.status == 200 && $0.live && $0.user == "oauth2" }, "\(requests)")

        // Another registry: skopeo asks no helper of ours and sends nothing.
        let other = try await run(["inspect", "--tls-verify=false", "--raw", "docker://\(unmapped.registry)/public/app:latest"])
        #expect(other.status == 0, "\(other.stderr)")
        #expect(try await unmapped.requests().allSatisfy { $0.user == nil && !$0.live })
        try await world.assertNoSecretsLeaked()
    }
}
