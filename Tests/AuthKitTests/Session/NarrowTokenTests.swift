import Foundation
import SecretStore
import Testing
import TestSupport
@testable import AuthKit

/// Narrower tokens (fewer scopes on refresh, RFC 6749 §6; resources, RFC 8707) against our
/// provider, which honours both, and glewlwyd, which narrows a resource but not scopes.
@Suite struct NarrowTokenTests {
    static let api = "https://api.example.test/"
    static let other = "https://other.example.test/"

    static let options: OIDCTestProvider.Options = {
        var options = OIDCTestProvider.Options()
        options.resources = [api, other]
        options.jwtAccessTokens = true
        return options
    }()

    static func issuedItem(_ harness: SignInHarness, _ token: String) async throws -> PeerJSON? {
        try await harness.provider.issued()["items"].array.first { $0["value"].string == token }
    }

    @Test func aResourceTokenIsNarrowCachedAndLeavesTheSignInsOwnAlone() async throws {
        let harness = try await SignInHarness.start(options: Self.options)
        var profile = try harness.profile()
        profile.resources = [Self.api, Self.other]
        _ = try await harness.run(harness.flow(profile)).get()
        let own = try await harness.session.validAccessToken()
        let narrow = try await harness.session.validAccessToken(resources: [Self.api])
        #expect(narrow.value != own.value && narrow.refreshed && narrow.resources == [Self.api])
        #expect(try await Self.issuedItem(harness, narrow.value)?["resources"].array.compactMap(\.string) == [Self.api])
        // Shared from the store by the next tool; the sign-in's own token untouched.
        let again = try await harness.secondSession().validAccessToken(resources: [Self.api])
        #expect(again.value == narrow.value && !again.refreshed)
        #expect(try await harness.session.validAccessToken().value == own.value)
        #expect(try await harness.provider.log().count(grantType: "refresh_token") == 1)
        try await harness.expectNoSecretsLeaked()
    }

    @Test func fewerScopesAreAskedAndChecked() async throws {
        let harness = try await SignInHarness.start(options: Self.options)
        _ = try await harness.run(harness.flow(try harness.profile())).get()
        let narrow = try await harness.session.validAccessToken(scopes: ["openid"])
        #expect(narrow.scopes == ["openid"] && narrow.refreshed)
        // A provider that answers with the grant's full scopes is refused, not trusted, and
        // the refresh token it rotated is kept.
        try await harness.provider.setFault(.ignoreScopeNarrowing)
        await #expect {
            _ = try await harness.session.validAccessToken(scopes: ["openid", "email"])
        } throws: { error in
            guard case AuthKitError.notNarrowed(let reason) = error else { return false }
            return reason.contains("does not narrow scopes")
        }
        #expect(try await harness.session.validAccessToken(minimumLifetime: .seconds(86_400 * 300)).refreshed)
    }

    @Test func aProviderThatIgnoresTheResourceIsRefused() async throws {
        let harness = try await SignInHarness.start(options: Self.options)
        _ = try await harness.run(harness.flow(try harness.profile())).get()
        try await harness.provider.setFault(.ignoreResource)
        await #expect {
            _ = try await harness.session.validAccessToken(resources: [Self.api])
        } throws: { error in
            guard case AuthKitError.notNarrowed(let reason) = error else { return false }
            return reason.contains("ignored the resource")
        }
        #expect(try await harness.records().first?.additionalTokens == nil)
    }

    @Test func anOpaqueTokenCannotBeShownNarrow() async throws {
        var options = Self.options
        options.jwtAccessTokens = false
        let harness = try await SignInHarness.start(options: options)
        _ = try await harness.run(harness.flow(try harness.profile())).get()
        await #expect {
            _ = try await harness.session.validAccessToken(resources: [Self.api])
        } throws: { error in
            "\(error)".contains("does not say its audience")
        }
    }

    /// glewlwyd 2.7.5 with resources allowed: a resource named at sign-in gives a token for it
    /// alone; one the sign-in did not name is its `invalid_target`, said with the resource.
    @Test func glewlwydNarrowsToAResourceNamedAtSignIn() async throws {
        var options = OIDCTestProvider.Options()
        options.resources = [Self.api, Self.other]
        let harness = try await SignInHarness.start(.glewlwyd, options: options)
        var profile = try harness.profile()
        profile.resources = [Self.api]
        _ = try await harness.run(harness.flow(profile)).get()
        let narrow = try await harness.session.validAccessToken(resources: [Self.api])
        #expect(narrow.resources == [Self.api])
        await #expect {
            _ = try await harness.session.validAccessToken(resources: [Self.other])
        } throws: { error in
            "\(error)".contains("invalid_target")
        }
        // Fewer scopes (openid of openid offline_access): the token's scope says openid, which is
        // also all glewlwyd puts in an access token of this grant, so this shows the check
        // passes a token no wider than asked; a provider answering wider is refused
        // (fewerScopesAreAskedAndChecked, with our provider's ignore_scope_narrowing).
        let fewer = try await harness.session.validAccessToken(scopes: ["openid"])
        #expect(fewer.scopes == ["openid"])
        try await harness.expectNoSecretsLeaked()
    }

    @Test func aTokenExchangedForAnotherAudienceIsCheckedAndShared() async throws {
        var options = Self.options
        options.tokenExchange = true
        let harness = try await SignInHarness.start(options: options)
        _ = try await harness.run(harness.flow(try harness.profile())).get()
        let exchanged = try await harness.session.exchangedToken(audience: "api-b", scopes: ["openid"])
        #expect(exchanged.scopes == ["openid"])
        #expect(try await Self.issuedItem(harness, exchanged.value)?["audience"].array.compactMap(\.string) == ["api-b"])
        let again = try await harness.secondSession().exchangedToken(audience: "api-b", scopes: ["openid"])
        #expect(again.value == exchanged.value)
        #expect(try await harness.provider.log().count(grantType: TokenEndpointClient.tokenExchangeGrant) == 1)
        try await harness.provider.setFault(.widenExchange)
        await #expect {
            _ = try await harness.session.exchangedToken(audience: "api-c", scopes: ["openid"])
        } throws: { error in
            guard case AuthKitError.notNarrowed = error else { return false }
            return true
        }
        try await harness.expectNoSecretsLeaked()
    }

    /// A rotated refresh token the store refused waits in the kernel keyring (PendingSave): an
    /// exchange, or a client's "this token was rejected", writes the record on top of it, never
    /// the stale one that would lose it.
    @Test func anExchangeOrARejectionBuildsOnAPendingRefreshToken() async throws {
        var options = Self.options
        options.tokenExchange = true
        let harness = try await SignInHarness.start(options: options)
        defer { Keyctl.removeGroup(harness.group) }
        _ = try await harness.run(harness.flow(try harness.profile())).get()
        for step in ["exchange", "rejected"] {
            let stored = try #require(try await harness.records().first)
            let key = harness.session.itemKey(for: stored)
            var rotated = stored
            rotated.refreshToken = "rotated-\(step)-refresh-token"
            rotated.generation = RefreshStateMachine.nextGeneration(stored.generation)
            #expect(PendingRecord.keep(rotated, for: key, replacing: stored.generation, logger: harness.session.logger))
            if step == "exchange" {
                _ = try await harness.session.exchangedToken(audience: "api-\(step)", scopes: ["openid"])
            } else {
                #expect(try await harness.session.markRejected(accessToken: stored.accessToken))
            }
            let after = try #require(try await harness.records().first)
            let kept = after.refreshToken == rotated.refreshToken
            #expect(kept, "\(step): the pending refresh token was lost")
            #expect(PendingSave.find(key) == nil, "\(step): saved, so no longer pending")
        }
    }

    @Test func noExchangeWhereTheProviderOffersNone() async throws {
        let harness = try await SignInHarness.start(options: Self.options)
        _ = try await harness.run(harness.flow(try harness.profile())).get()
        await #expect {
            _ = try await harness.session.exchangedToken(audience: "api-b")
        } throws: { error in
            "\(error)".contains("does not offer token exchange")
        }
    }
}
