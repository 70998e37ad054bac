import Foundation
import TestSupport
import Testing

/// podman, skopeo and buildah read credential helpers from containers-auth.json and speak
/// docker's helper protocol: Debian's skopeo, set up by `authkit setup podman`, against a
/// registry that takes only the provider's live access tokens.
@Suite struct PodmanCredentialTests {
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
