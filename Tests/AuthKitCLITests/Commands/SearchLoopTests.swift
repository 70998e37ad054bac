import Foundation
import TestSupport
import Testing

/// No runaway loops. A Graph that answers empty pages with a link to themselves, or
/// 401 to every other request, once made one `authkit search` send thousands of requests and
/// a thousand refresh grants. Now a search is bounded: an empty page or a repeated link ends
/// it, at most GraphClient.maxPages pages, at most one forced refresh per command.
@Suite struct SearchLoopTests {
    @Test func emptyPagesLinkingToThemselvesEndTheSearch() async throws {
        let world = try await CLIHarness.start(graph: true)
        defer { world.stop() }
        try await world.signIn(user: "ada")
        let graph = try #require(world.graph)
        try await graph.clearRequests()
        try await graph.misbehave(emptyLoop: true)
        let search = try await world.authkit(["search", "ada", "--group", world.group], timeout: 20)
        #expect(!search.timedOut)
        #expect(try await graph.requests().count <= 2, "an empty page with a nextLink is the end")
        try await world.assertNoSecretsLeaked()
    }

    @Test func aGraphRefusingEveryOtherRequestCostsAtMostOneRefresh() async throws {
        let world = try await CLIHarness.start(graph: true)
        defer { world.stop() }
        try await world.signIn(user: "ada")
        let graph = try #require(world.graph)
        try await graph.misbehave(flaky401: true)
        try await world.provider.clearLog()
        try await graph.clearRequests()
        let search = try await world.authkit(["search", "a", "--top", "999", "--group", world.group], timeout: 30)
        #expect(!search.timedOut)
        #expect(try await world.provider.log().grantTypes["refresh_token", default: 0] <= 1, "more than one refresh for one search")
        #expect(try await graph.requests().count <= 2 * 12 + 2)
        // A second 401 after the one refresh is "Graph refused the token" (exit 1), not a loop.
        #expect(search.status == 0 || search.status == 1, "\(search.status): \(search.stderr)")
        try await world.assertNoSecretsLeaked()
    }
}
