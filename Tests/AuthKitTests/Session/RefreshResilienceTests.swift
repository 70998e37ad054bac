import Foundation
import SecretStore
import Testing
import TestSupport
@testable import AuthKit

// The sign-in survives whatever a provider answers to a refresh. Against our authlib
// provider with rotating refresh tokens: each case checks what was handed out, what is stored
// afterwards, and what the provider saw.

extension SignInHarness {
    /// The refresh tokens the provider issued, oldest first, with their state.
    func refreshTokens() async throws -> [(value: String, rotated: Bool, revoked: Bool, active: Bool)] {
        try await provider.issued()["items"].array
            .filter { $0["kind"] == "refresh_token" }
            .sorted { ($0["issued_at"].number ?? 0) < ($1["issued_at"].number ?? 0) }
            .compactMap { item in
                guard let value = item["value"].string else { return nil }
                return (value, item["rotated"].bool ?? false, item["revoked"].bool ?? false, item["active"].bool ?? false)
            }
    }

    /// The sub-claim-free parts of a record that a refresh must not touch when nothing is kept.
    func expectUnchanged(_ before: TokenRecord, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        #expect(try await record() == before, "the stored sign-in changed", sourceLocation: sourceLocation)
    }
}

extension PeerJSON {
    var number: Double? { if case .number(let value) = self { return value } else { return nil } }
}

@Suite("Refresh resilience")
struct RefreshResilienceTests {
    /// A key the JWKS does not list signs the refreshed id_token: nothing handed out, the
    /// rotated refresh token kept with the problem noted; the next call heals without a login,
    /// with the rotated token (the dead one is never sent again).
    @Test func anUnknownKidKeepsTheRotatedRefreshTokenAndHealsNextTime() async throws {
        let harness = try await SignInHarness.signedIn()
        let stale = try await harness.expireAccessToken()
        try await harness.provider.clearLog()
        try await harness.provider.setFault(.idTokenUnknownKey)
        let error = try #require(await harness.token().failureValue)
        guard case .idToken = error else {
            Issue.record("expected an id_token error, got \(error)")
            return
        }
        let kept = try await harness.record()
        #expect(kept.refreshToken != stale.refreshToken, "the rotated refresh token was dropped")
        #expect(kept.accessToken == stale.accessToken, "an access token from a refused answer was stored")
        #expect(kept.idToken == stale.idToken)
        #expect(kept.refreshProblem?.contains("id_token") == true, "\(kept.refreshProblem ?? "no problem noted")")
        let issued = try await harness.refreshTokens()
        #expect(
            issued.last?.value == kept.refreshToken && issued.last?.active == true, "the stored refresh token is the provider's live one")
        #expect(issued.first?.value == stale.refreshToken && issued.first?.rotated == true)

        // The provider is healthy again: the next call refreshes with the kept token.
        let token = try await harness.token().get()
        #expect(token.refreshed)
        #expect(try await harness.activeAccessTokens().contains(token.value))
        let healed = try await harness.record()
        #expect(healed.refreshProblem == nil && healed.refreshProblemAt == nil)
        #expect(healed.idTokenVerifiedAt ?? 0 > stale.idTokenVerifiedAt ?? 0)
        #expect(try await harness.refreshCount() == 2, "exactly two refreshes: no retry with a dead token")
        try await harness.expectNoSecretsLeaked()
    }

    /// The provider really rolled its keys over, and this long-running session had already
    /// refetched for an unknown kid moments ago (inside the cooldown): the refresh after a
    /// provider answered asks once more, and works on the first try.
    @Test func aRealKeyRolloverInsideTheCooldownWorksFirstTime() async throws {
        let harness = try await SignInHarness.signedIn()
        let tool = try harness.secondSession()
        try await harness.expireAccessToken()
        // Start the session's cooldown: a refresh whose id_token names an unpublished kid.
        try await harness.provider.setFault(.idTokenUnknownKey)
        _ = try #require(await harness.token(tool).failureValue)
        let fetchesBefore = await tool.keys.fetchCount
        // A genuine rollover now, within the 30 s cooldown.
        try await harness.provider.rotateKeys()
        let token = try await harness.token(tool).get()
        #expect(token.refreshed)
        #expect(await tool.keys.fetchCount == fetchesBefore + 1, "exactly one more key set fetch")
        #expect(try await harness.record().refreshProblem == nil)
        try await harness.expectNoSecretsLeaked()
    }

    /// Another user's answer: nothing handed out, nothing of it kept under this account, its
    /// refresh token revoked, and the message says what happened.
    @Test func anotherIdentityIsRefusedAndItsRefreshTokenRevoked() async throws {
        let harness = try await SignInHarness.signedIn()
        let stale = try await harness.expireAccessToken()
        try await harness.provider.setFault(.refreshDifferentSubject)
        let error = try #require(await harness.token().failureValue)
        guard case .identityChanged(let revoked) = error else {
            Issue.record("expected identityChanged, got \(error)")
            return
        }
        #expect(revoked)
        #expect(error.description.contains("another user"))
        #expect(error.category == .loginNeeded)
        try await harness.expectUnchanged(stale)
        let issued = try await harness.refreshTokens()
        #expect(issued.last?.value != stale.refreshToken)
        #expect(issued.last?.revoked == true, "the refresh token of the other user's answer was not revoked")
        try await harness.expectNoSecretsLeaked()
    }

    /// OIDC Core §12.2 rules beyond iss/sub: each refused, the rotated refresh token kept, and
    /// the next call (the provider behaving again) works.
    @Test(arguments: [
        (ProviderFault.refreshOlderIssuedAt, "issued before"), (.refreshOtherAuthTime, "auth_time"), (.refreshWithNonce, "nonce"),
        (.idTokenWrongAudience, "aud"),
    ])
    func aRefreshedIDTokenBreakingARuleIsNotUsed(fault: ProviderFault, reason: String) async throws {
        let harness = try await SignInHarness.signedIn()
        let stale = try await harness.expireAccessToken()
        try await harness.provider.setFault(fault)
        let error = try #require(await harness.token().failureValue)
        #expect(error.category == .provider)
        let kept = try await harness.record()
        #expect(kept.refreshToken != stale.refreshToken)
        #expect(kept.accessToken == stale.accessToken)
        #expect(
            kept.refreshProblem?.lowercased().contains(reason) == true, "\(kept.refreshProblem ?? "no problem noted") should say \(reason)")
        #expect(try await harness.token().get().refreshed)
        try await harness.expectNoSecretsLeaked()
    }

    /// The id_token is optional on refresh: absent, the old one is kept; so is the old refresh
    /// token when the answer has none.
    @Test func noIDTokenAndNoRefreshTokenInTheAnswerKeepTheOldOnes() async throws {
        var options = OIDCTestProvider.Options()
        options.refreshRotation = false
        let harness = try await SignInHarness.signedIn(options: options)
        let stale = try await harness.expireAccessToken()
        try await harness.provider.setFault(.idTokenOmitted)
        let first = try await harness.token().get()
        var record = try await harness.record()
        #expect(first.refreshed && record.accessToken == first.value)
        #expect(record.idToken == stale.idToken && record.idTokenVerifiedAt == stale.idTokenVerifiedAt)

        try await harness.expireAccessToken()
        try await harness.provider.setFault(.patchJSON("token", ["refresh_token": .null]))
        let second = try await harness.token().get()
        record = try await harness.record()
        #expect(record.accessToken == second.value)
        #expect(record.refreshToken == stale.refreshToken, "the old refresh token was dropped")
        try await harness.expectNoSecretsLeaked()
    }

    /// A refresh answer that names a member twice is refused whole: nothing stored or replaced.
    @Test(arguments: ["access_token", "refresh_token", "id_token", "expires_in"])
    func aDuplicateMemberInARefreshAnswerIsRefused(member: String) async throws {
        let harness = try await SignInHarness.signedIn()
        let stale = try await harness.expireAccessToken()
        try await harness.provider.setFault(.duplicateMember(member, grantType: "refresh_token"))
        let error = try #require(await harness.token().failureValue)
        #expect(error.description.contains("duplicate member name ‘\(member)’"), "\(error)")
        #expect(!error.description.contains("second-value"))
        try await harness.expectUnchanged(stale)
        try await harness.expectNoSecretsLeaked()
    }

    /// The same in the code grant: the sign-in fails with a clear message, nothing is stored.
    @Test func aDuplicateMemberInTheCodeGrantAnswerStoresNothing() async throws {
        let harness = try await SignInHarness.start(.authlib)
        try await harness.provider.setFault(.duplicateMember("access_token", grantType: "authorization_code"))
        let error = try #require(await harness.run(harness.flow(try harness.profile())).failureValue)
        #expect(error.description.contains("duplicate member name ‘access_token’"), "\(error)")
        #expect(try await harness.itemCount() == 0)
        try await harness.expectNoSecretsLeaked()
    }

    /// A per-resource refresh (`token --scope`): the rotated refresh token is kept with the
    /// scoped token; a duplicate member is refused with nothing replaced.
    @Test func perResourceRefreshesFollowTheSameRules() async throws {
        // As in SharedSessionTests.additionalScopes: granted User.Read, reported without it.
        let harness = try await SignInHarness.start()
        try await harness.provider.setFault(.patchJSON("token", ["scope": "openid profile offline_access"]))
        _ = try await harness.run(harness.flow(try harness.profile(scopes: ["openid", "profile", "offline_access", "User.Read"]))).get()
        let stale = try await harness.record()
        let scoped = try await harness.token(scopes: ["User.Read"]).get()
        var record = try await harness.record()
        #expect(record.refreshToken != stale.refreshToken)
        #expect(record.additionalTokens?["User.Read"]?.accessToken == scoped.value)
        #expect(record.accessToken == stale.accessToken)

        // That scoped token runs out; its refresh answer names a member twice.
        record.additionalTokens?["User.Read"]?.expiresAt = Date().timeIntervalSince1970 - 10
        try await harness.session.save(record)
        let before = record
        try await harness.provider.setFault(.duplicateMember("refresh_token", grantType: "refresh_token"))
        let error = try #require(await harness.token(scopes: ["User.Read"]).failureValue)
        #expect(error.description.contains("duplicate member name ‘refresh_token’"))
        record = try await harness.record()
        #expect(record == before)
        try await harness.expectNoSecretsLeaked()
    }

    /// No trap on a number from outside: an `expires_in` of Int64.max is clamped to a year.
    @Test func anAbsurdLifetimeIsClamped() async throws {
        let harness = try await SignInHarness.signedIn()
        try await harness.expireAccessToken()
        try await harness.provider.setFault(.patchJSON("token", ["expires_in": .number(9.223372036854775807e18)]))
        let token = try await harness.token().get()
        #expect(token.expiresAt.timeIntervalSinceNow <= Double(TokenResponse.maximumLifetime) + 5)
        #expect(
            try await harness.record().accessTokenExpiresAt ?? 0 <= Date().timeIntervalSince1970 + Double(TokenResponse.maximumLifetime) + 5
        )
        try await harness.expectNoSecretsLeaked()
    }
}
