import Foundation
import TestSupport
import Testing

/// `token --resource`, `--scope` fewer, `--exchange --audience`, and the same through the agent:
/// a narrower token or nothing, never the sign-in's own in its place.
@Suite struct NarrowTokenCLITests {
    static let api = "https://api.example.test/"

    static let options: OIDCTestProvider.Options = {
        var options = OIDCTestProvider.Options()
        options.resources = [api]
        options.jwtAccessTokens = true
        options.tokenExchange = true
        return options
    }()

    static func issued(_ world: CLIHarness, _ token: String) async throws -> PeerJSON? {
        try await world.provider.issued()["items"].array.first { $0["value"].string == token.trimmingCharacters(in: .newlines) }
    }

    @Test(arguments: [false, true])
    func narrowTokensOrNothing(agent: Bool) async throws {
        let world = try await CLIHarness.start(provider: Self.options, agent: agent)
        defer { world.stop() }
        try await world.signIn(user: "ada", ["--resource", Self.api])
        let own = try await world.authkit(["token", "--group", world.group])
        let narrow = try await world.authkit(["token", "--group", world.group, "--resource", Self.api])
        #expect(narrow.status == 0 && narrow.stdout != own.stdout, "\(narrow.stderr)")
        #expect(try await Self.issued(world, narrow.stdout)?["resources"].array.compactMap(\.string) == [Self.api])
        let shared = try await world.authkit(["token", "--group", world.group, "--resource", Self.api])
        #expect(shared.stdout == narrow.stdout)

        let exchanged = try await world.authkit(["token", "--group", world.group, "--exchange", "--audience", "api-b", "--scope", "openid"])
        #expect(exchanged.status == 0, "\(exchanged.stderr)")
        #expect(try await Self.issued(world, exchanged.stdout)?["audience"].array.compactMap(\.string) == ["api-b"])

        try await world.provider.setFault(.ignoreScopeNarrowing)
        let wide = try await world.authkit(["token", "--group", world.group, "--scope", "openid", "--scope", "profile"])
        #expect(wide.status == 4 && wide.stdout.isEmpty, "\(wide.status): \(wide.stdout)")
        #expect(wide.stderr.contains("no narrower token") && wide.stderr.contains("does not narrow scopes"), "\(wide.stderr)")
        #expect(wide.stderr.split(separator: "\n").count <= 2)

        for bad in [["--resource", "not-a-uri"], ["--audience", "x"], ["--exchange"]] {
            let refused = try await world.authkit(["token", "--group", world.group] + bad)
            #expect(refused.status == 2, "\(bad): \(refused.stderr)")
        }
        try await world.assertNoSecretsLeaked()
    }
}
