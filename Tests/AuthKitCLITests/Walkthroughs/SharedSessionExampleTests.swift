import Foundation
import TestSupport
import Testing

/// `authkit-example` (Examples/SharedSessionExample): the second, separate tool of the README
/// and the demo. It names the group and nothing else, and shares the sign-in.
@Suite struct SharedSessionExampleTests {
    static let source = TestPaths.packageRoot.appendingPathComponent("Examples/SharedSessionExample/main.swift")

    @Test func readmeShowsTheCompiledSourceVerbatim() throws {
        let readme = try String(contentsOf: TestPaths.packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
        let marker = "<!-- Examples/SharedSessionExample/main.swift, kept identical by SharedSessionExampleTests -->\n```swift\n"
        let start = try #require(readme.range(of: marker), "README lacks the marked example")
        let rest = readme[start.upperBound...]
        let end = try #require(rest.range(of: "```\n"))
        let shown = String(rest[..<end.lowerBound])
        let compiled = try String(contentsOf: Self.source, encoding: .utf8)
        #expect(shown == compiled, "README.md's example differs from \(Self.source.path); copy the file into the README")
    }

    @Test func sharesTheSignInOfAuthkitLogin() async throws {
        let world = try await CLIHarness.start()
        defer { world.stop() }
        let nobody = try await world.example()
        #expect(nobody.status == 1)
        #expect(nobody.stdout == "Nobody is signed in in \(world.group): run `authkit login --group \(world.group)`.\n")

        try await world.signIn(user: "sean")
        let signedIn = try await world.example()
        #expect(signedIn.status == 0, "\(signedIn.stdout)")
        #expect(signedIn.stdout.hasPrefix("Signed in as Seán O'Brien (sean@example.test) at \(world.provider.issuer.absoluteString)\n"))
        let minutes = signedIn.stdout.components(separatedBy: "Access token valid for ").dropFirst().first?.split(separator: " ").first
            .flatMap { Int($0) }
        #expect((30...60).contains(minutes ?? -1), "the provider grants an hour: \(signedIn.stdout)")
        #expect(!signedIn.stdout.contains("just refreshed"))

        // Another group is another sign-in.
        let other = try await world.example(["org.example.other"])
        #expect(other.status == 1)

        // A token too short-lived for it is refreshed, and authkit then uses the refreshed one.
        try await world.provider.configure(["access_token_ttl": 60])
        try await world.signIn(user: "sean")
        try await world.provider.configure(["access_token_ttl": 3600])
        let refreshed = try await world.example()
        #expect(refreshed.status == 0, "\(refreshed.stdout)")
        #expect(refreshed.stdout.contains("(just refreshed)"))
        #expect(try await world.provider.log().count(grantType: "refresh_token") == 1)
        let token = try await world.authkit(["token", "--group", world.group, "--min-ttl", "120"])
        #expect(token.status == 0)
        #expect(try await world.provider.log().count(grantType: "refresh_token") == 1, "authkit token found the example's refresh")
        try await world.assertNoSecretsLeaked()
    }
}
