import Foundation
import SecretStore
import Testing
import TestSupport
@testable import AuthKit

// The shared session: refresh with rotation, invalid_grant after another process
// rotated, no deletion of a renewed sign-in, identity change on refresh, sign-out with
// revocation, additional scopes, and a tool that names only the group. Against our authlib
// provider (rotation, revocation and id_tokens on refresh are its features; Tests/Peers/README.md).

extension SignInHarness {
    /// A harness with ada signed in through the browser flow.
    static func signedIn(
        _ implementation: OIDCTestProvider.Implementation = .authlib, options: OIDCTestProvider.Options = OIDCTestProvider.Options(),
        scopes: [String]? = nil, confidential: Bool = false
    ) async throws -> SignInHarness {
        let harness = try await SignInHarness.start(implementation, options: options)
        _ = try await harness.run(harness.flow(try harness.profile(confidential: confidential, scopes: scopes))).get()
        return harness
    }

    /// The one stored record.
    func record() async throws -> TokenRecord {
        let records = try await records()
        try #require(records.count == 1, "expected one stored sign-in, found \(records.count)")
        return records[0]
    }

    /// Marks the stored access token as expired 10 s ago (nothing else changes).
    @discardableResult
    func expireAccessToken() async throws -> TokenRecord {
        var record = try await record()
        record.accessTokenExpiresAt = Date().timeIntervalSince1970 - 10
        try await session.save(record)
        return record
    }

    /// A refresh at the provider's token endpoint with raw HTTP, as another tool would do it.
    func rawRefresh(_ refreshToken: String) async throws -> TestHTTPResponse {
        let client = try #require(provider.publicClient)
        return try await TestHTTP.postForm(
            provider.issuer.appendingPathComponent("token"),
            [("grant_type", "refresh_token"), ("refresh_token", refreshToken), ("client_id", client.clientID)])
    }

    func refreshCount() async throws -> Int {
        try await provider.log().count(grantType: "refresh_token")
    }

    /// The access tokens the provider issued that it still accepts.
    func activeAccessTokens() async throws -> [String] {
        try await provider.issued()["items"].array
            .filter { $0["kind"] == "access_token" && $0["active"].bool != false }.compactMap { $0["value"].string }
    }

    /// Calls `validAccessToken`, recording the error description (if any) for the leak scan.
    func token(
        _ session: SharedSession? = nil, minimumLifetime: Duration = .seconds(60), scopes: [String]? = nil,
        replacing rejected: AccessToken? = nil
    ) async -> Result<AccessToken, AuthKitError> {
        do {
            let token = try await (session ?? self.session).validAccessToken(
                minimumLifetime: minimumLifetime, scopes: scopes, replacing: rejected)
            transcript.add("\(token)")
            return .success(token)
        } catch {
            transcript.add(error.description)
            return .failure(error)
        }
    }
}

@Suite("SharedSession against a real provider")
struct SharedSessionTests {
    @Test("a live access token is returned from the store without any request")
    func liveTokenFromStore() async throws {
        let harness = try await SignInHarness.signedIn()
        let record = try await harness.record()
        try await harness.provider.clearLog()
        let token = try await harness.token().get()
        #expect(token.value == record.accessToken)
        #expect(!token.refreshed)
        #expect(try await harness.provider.log().total == 0)
    }

    @Test("refresh-token rotation: an expired access token is refreshed once, the rotated refresh token stored, the old one dead")
    func refreshRotation() async throws {
        let harness = try await SignInHarness.signedIn()
        let before = try await harness.expireAccessToken()
        let token = try await harness.token().get()
        #expect(token.refreshed)
        #expect(token.value != before.accessToken)
        #expect(try await harness.activeAccessTokens().contains(token.value))

        let after = try await harness.record()
        #expect(after.accessToken == token.value)
        #expect(after.refreshToken != nil && after.refreshToken != before.refreshToken, "the rotated refresh token is stored")
        #expect(after.generation == before.generation + 1)
        #expect(after.refreshedAt != nil)
        #expect(after.idToken != before.idToken, "the refreshed id_token was validated and stored")
        #expect(after.subject == before.subject && after.issuer == before.issuer)

        #expect(try await harness.refreshCount() == 1)
        let old = try await harness.rawRefresh(try #require(before.refreshToken))
        #expect(old.status == 400 && (try? old.json()["error"]) == "invalid_grant", "the provider rotated the old refresh token out")

        // Now fresh: no second refresh.
        let again = try await harness.token().get()
        #expect(again.value == token.value && !again.refreshed)
        #expect(try await harness.refreshCount() == 2, "ours and the refused raw one; none since")
        try await harness.expectNoSecretsLeaked()
    }

    @Test(
        "refresh against providers without rotation or id_token on refresh: glewlwyd (public client), oidc-provider-mock (client secret)",
        arguments: [OIDCTestProvider.Implementation.glewlwyd, .mock])
    func refreshAgainstOtherProviders(_ implementation: OIDCTestProvider.Implementation) async throws {
        let harness = try await SignInHarness.signedIn(implementation, confidential: implementation == .mock)
        let before = try await harness.expireAccessToken()
        let token = try await harness.token().get()
        #expect(token.refreshed)
        #expect(token.value != before.accessToken)
        let after = try await harness.record()
        #expect(after.accessToken == token.value)
        #expect(after.refreshToken == before.refreshToken, "no rotation: the refresh token is kept")
        #expect(after.idToken == before.idToken, "no id_token on refresh: the validated one is kept")
        #expect(after.generation == before.generation + 1)
        try await harness.expectNoSecretsLeaked()
    }

    @Test("concurrent callers in one process share one refresh (single flight), also across sessions of the group")
    func singleFlightInProcess() async throws {
        let harness = try await SignInHarness.signedIn()
        try await harness.expireAccessToken()
        try await harness.provider.setFault(.delay("token", milliseconds: 300))
        let other = try harness.secondSession()
        let values = try await withThrowingTaskGroup(of: String.self) { group in
            for index in 0..<8 {
                group.addTask { try await harness.token(index.isMultiple(of: 2) ? harness.session : other).get().value }
            }
            return try await group.reduce(into: [String]()) { $0.append($1) }
        }
        #expect(Set(values).count == 1)
        #expect(try await harness.refreshCount() == 1)
        #expect(try await harness.record().accessToken == values[0])
    }

    @Test("invalid_grant after another process rotated the refresh token: the store is re-read and its token used, nothing deleted")
    func invalidGrantAfterAnotherProcessRotated() async throws {
        let harness = try await SignInHarness.signedIn()
        let stale = try await harness.expireAccessToken()
        let store = harness.store, session = harness.session
        let renewed = Mailbox<TokenRecord>()
        // The other process refreshes (with the same refresh token) and writes its record right
        // before our refresh request reaches the provider, without taking authkit's lock.
        let interceptor = InterceptingTransport(beforeSend: { request in
            guard InterceptingTransport.formFields(request)?.contains(where: { $0 == ("grant_type", "refresh_token") }) == true,
                let answer = try? await harness.rawRefresh(stale.refreshToken ?? ""), answer.status == 200,
                let json = try? answer.json(), let access = json["access_token"].string
            else { return }
            var record = stale
            record.accessToken = access
            record.refreshToken = json["refresh_token"].string
            record.accessTokenExpiresAt = Date().timeIntervalSince1970 + 3600
            record.generation += 1
            _ = try? await store.save(try record.encoded(), for: session.itemKey(for: record), label: "other tool")
            renewed.put(record)
        })
        let ours = try harness.secondSession(transport: interceptor)
        let token = try await harness.token(ours).get()
        let other = try #require(await renewed.next(timeout: .seconds(1)), "the other process did not run")
        #expect(token.value == other.accessToken, "the other process's token is used")
        #expect(!token.refreshed)
        #expect(try await harness.record() == other, "the other process's record is left as it wrote it")
        #expect(try await harness.refreshCount() == 2, "the other process's refresh and our refused one")
        try await harness.expectNoSecretsLeaked()
    }

    @Test("a failed refresh never deletes a sign-in another process just renewed, even one whose access token is already short-lived")
    func failedRefreshNeverDeletesRenewedSignIn() async throws {
        let harness = try await SignInHarness.signedIn()
        let stale = try await harness.expireAccessToken()
        let store = harness.store, session = harness.session
        // As above, but the other process asked for less lifetime than we need: its access
        // token does not live long enough for us, its refresh token is the live one.
        let interceptor = InterceptingTransport(beforeSend: { request in
            guard InterceptingTransport.formFields(request)?.contains(where: { $0 == ("refresh_token", stale.refreshToken ?? "") }) == true,
                let answer = try? await harness.rawRefresh(stale.refreshToken ?? ""), answer.status == 200,
                let json = try? answer.json(), let access = json["access_token"].string
            else { return }
            var record = stale
            record.accessToken = access
            record.refreshToken = json["refresh_token"].string
            record.accessTokenExpiresAt = Date().timeIntervalSince1970 + 30
            record.generation += 1
            _ = try? await store.save(try record.encoded(), for: session.itemKey(for: record), label: "other tool")
        })
        let ours = try harness.secondSession(transport: interceptor)
        let result = await harness.token(ours, minimumLifetime: .seconds(300))
        let token = try result.get()
        #expect(token.refreshed, "refreshed again with the renewed refresh token")
        let record = try await harness.record()
        #expect(record.accessToken == token.value)
        #expect(record.generation == stale.generation + 2)
        #expect(try await harness.activeAccessTokens().contains(token.value))
        try await harness.expectNoSecretsLeaked()
    }

    @Test("a refresh token the provider no longer accepts (nobody renewed it): login required, the sign-in left in place")
    func revokedRefreshTokenLeavesSignIn() async throws {
        let harness = try await SignInHarness.signedIn()
        let stale = try await harness.expireAccessToken()
        // Used up elsewhere, and nobody stored the result.
        #expect(try await harness.rawRefresh(try #require(stale.refreshToken)).status == 200)
        let error = try #require(await harness.token().failureValue)
        guard case .loginRequired(let account, _) = error else {
            Issue.record("expected loginRequired, got \(error)")
            return
        }
        #expect(account == "ada@example.test")
        #expect(error.category == .loginNeeded)
        #expect(try await harness.record() == stale, "nothing is deleted or changed")
        try await harness.expectNoSecretsLeaked()
    }

    @Test("a refreshed id_token naming another sub: identityChanged, nothing stored")
    func refreshWithDifferentSubject() async throws {
        let harness = try await SignInHarness.signedIn()
        let stale = try await harness.expireAccessToken()
        try await harness.provider.setFault(.refreshDifferentSubject)
        let error = try #require(await harness.token().failureValue)
        guard case .identityChanged = error else {
            Issue.record("expected identityChanged, got \(error)")
            return
        }
        #expect(error.category == .loginNeeded)
        #expect(try await harness.record() == stale)
        try await harness.expectNoSecretsLeaked()
    }

    @Test(
        "the provider's key set unavailable at refresh time: a typed error before the refresh token is used, so the next call still refreshes"
    )
    func keySetOutageDoesNotBurnRefreshToken() async throws {
        let harness = try await SignInHarness.signedIn()
        let stale = try await harness.expireAccessToken()
        try await harness.provider.clearLog()
        try await harness.provider.setFault(.http500("jwks"))
        let tool = try harness.secondSession()  // a new process: no keys cached
        let error = try #require(await harness.token(tool).failureValue)
        guard case .keys = error else {
            Issue.record("expected a key set error, got \(error)")
            return
        }
        #expect(try await harness.refreshCount() == 0, "the refresh token was not spent")
        #expect(try await harness.record() == stale)
        let token = try await harness.token(tool).get()
        #expect(token.refreshed)
        #expect(try await harness.activeAccessTokens().contains(token.value))
    }

    @Test("a refresh answer lost on the way (connection dropped after the provider processed it): typed error, record unchanged")
    func lostRefreshAnswer() async throws {
        let harness = try await SignInHarness.signedIn()
        let stale = try await harness.expireAccessToken()
        try await harness.provider.setFault(.closeAfterProcessing(grantType: "refresh_token"))
        let error = try #require(await harness.token().failureValue)
        guard case .tokenEndpoint(.transport) = error else {
            Issue.record("expected a transport error, got \(error)")
            return
        }
        #expect(try await harness.refreshCount() == 1, "not retried: the refresh token may have been used")
        #expect(try await harness.record() == stale)
    }

    @Test(
        "malformed refresh answers are typed errors; one that still carries the rotated refresh token keeps it, the rest change nothing",
        arguments: [
            (ProviderFault.malformed("token"), false),
            (ProviderFault.patchJSON("token", ["token_type": "MAC"]), true),
            (ProviderFault.patchJSON("token", ["access_token": nil]), true),
            (ProviderFault.patchJSON("token", ["scope": ["openid", "profile"]]), true),
            (ProviderFault.http500("token"), false),
            (ProviderFault.error("invalid_client", description: "Client authentication failed", status: 401), false),
        ] as [(ProviderFault, Bool)])
    func malformedRefreshAnswer(_ fault: ProviderFault, keepsRotation: Bool) async throws {
        let harness = try await SignInHarness.signedIn()
        let stale = try await harness.expireAccessToken()
        try await harness.provider.setFault(fault)
        let error = try #require(await harness.token().failureValue)
        guard case .tokenEndpoint = error else {
            Issue.record("expected a token endpoint error, got \(error)")
            return
        }
        let after = try #require(try await harness.record())
        if keepsRotation {
            // The provider spent the old refresh token: the new one is kept, nothing handed out.
            #expect(after.refreshToken != stale.refreshToken && after.refreshToken != nil)
            #expect(after.accessToken == stale.accessToken && after.refreshProblem != nil)
            try await harness.provider.clearFaults()
            #expect(await harness.token().failureValue == nil, "the kept refresh token works")
        } else {
            #expect(after == stale)
        }
        try await harness.expectNoSecretsLeaked()
    }

    @Test("sign-out revokes the refresh token first (RFC 7009), then removes the sign-in; the refresh token no longer works")
    func signOutRevokes() async throws {
        let harness = try await SignInHarness.signedIn()
        let record = try await harness.record()
        let outcomes = try await harness.session.signOut()
        #expect(outcomes.count == 1)
        #expect(outcomes.first?.revocation == .revoked)
        #expect(outcomes.first?.removed == true)
        #expect(try await harness.itemCount() == 0)
        let log = try await harness.provider.log()
        #expect(log.count(endpoint: "revocation") == 1)
        let revocation = try #require(log.requests.first { $0["endpoint"] == "revocation" })
        #expect(revocation["status"] == 200)
        #expect(revocation["params"].array.contains("token_type_hint"))
        let refused = try await harness.rawRefresh(try #require(record.refreshToken))
        #expect(refused.status == 400, "the revoked refresh token is refused")
        #expect(try await harness.activeAccessTokens().isEmpty, "its access token went with it")

        // Signing out nobody is fine.
        #expect(try await harness.session.signOut().isEmpty)
        try await harness.expectNoSecretsLeaked()
    }

    @Test("a sign-out during another process's refresh is not undone by that refresh's write")
    func signOutDuringRefresh() async throws {
        let harness = try await SignInHarness.signedIn()
        try await harness.expireAccessToken()
        // The provider has answered the refresh (new tokens issued) but the answer is slow to
        // come back: meanwhile the person signs out in another tool.
        let answered = Mailbox<Bool>()
        let slowAnswer = InterceptingTransport(afterSend: { request, _ in
            guard InterceptingTransport.formFields(request)?.contains(where: { $0 == ("grant_type", "refresh_token") }) == true else {
                return
            }
            answered.put(true)
            try? await Task.sleep(for: .milliseconds(1500))
        })
        let refreshing = try harness.secondSession(transport: slowAnswer)
        let refresh = Task { await harness.token(refreshing) }
        try #require(await answered.next() == true)
        let outcomes = try await harness.session.signOut()
        _ = await refresh.value
        #expect(outcomes.count == 1)
        #expect(try await harness.itemCount() == 0, "the sign-out stands")
        #expect(try await harness.activeAccessTokens().isEmpty, "no live token is left behind")
        #expect(try await harness.provider.log().count(endpoint: "revocation") == 1)
    }

    @Test("sign-out still removes the sign-in when revocation fails, and says so")
    func signOutWhenRevocationFails() async throws {
        let harness = try await SignInHarness.signedIn()
        try await harness.provider.setFault(.http500("revocation"))
        let outcomes = try await harness.session.signOut(account: "ada@example.test")
        guard case .failed = outcomes.first?.revocation else {
            Issue.record("expected a failed revocation, got \(outcomes)")
            return
        }
        #expect(outcomes.first?.removed == true)
        #expect(try await harness.itemCount() == 0)
    }

    @Test("--scope: a token for other scopes is obtained with the refresh token, kept beside the main one, and reused")
    func additionalScopes() async throws {
        let harness = try await SignInHarness.start()
        // The grant covers User.Read, but the provider reports only part of it (RFC 6749 §5.1
        // lets it): so User.Read is outside the stored scopes and needs an additional token.
        try await harness.provider.setFault(.patchJSON("token", ["scope": "openid profile offline_access"]))
        _ = try await harness.run(harness.flow(try harness.profile(scopes: ["openid", "profile", "offline_access", "User.Read"]))).get()
        let before = try await harness.record()
        #expect(before.scopes == ["openid", "profile", "offline_access"])

        let token = try await harness.token(scopes: ["User.Read"]).get()
        #expect(token.refreshed)
        #expect(token.scopes == ["User.Read"])
        let log = try await harness.provider.log()
        let refresh = try #require(log.requests.last { $0["grant_type"] == "refresh_token" })
        #expect(refresh["params"].array.contains("scope"))

        let after = try await harness.record()
        #expect(after.accessToken == before.accessToken, "the main token is untouched")
        #expect(after.additionalTokens?["User.Read"]?.accessToken == token.value)
        #expect(after.refreshToken != before.refreshToken, "the rotated refresh token is kept")

        let again = try await harness.token(scopes: ["User.Read"]).get()
        #expect(again.value == token.value && !again.refreshed)
        #expect(try await harness.refreshCount() == 1)
        let main = try await harness.token().get()
        #expect(main.value == before.accessToken)
        try await harness.expectNoSecretsLeaked()
    }

    @Test("a tool that names only the group uses and refreshes the shared sign-in with no configuration of its own")
    func groupOnlyTool() async throws {
        let harness = try await SignInHarness.signedIn()
        try await harness.expireAccessToken()
        // A different tool: its own session object, transport and key cache; only group, store and lock directory.
        let tool = try SharedSession(group: harness.group, store: harness.store, environment: harness.environment)
        let accounts = try await tool.accounts()
        #expect(accounts.map(\.account) == ["ada@example.test"])
        let token = try await tool.validAccessToken()
        #expect(token.refreshed)
        #expect(try await harness.activeAccessTokens().contains(token.value))
        #expect(
            try await harness.provider.log().count(endpoint: "jwks") == 2,
            "the refreshed id_token was checked with keys from the stored jwks_uri")
    }

    @Test("a token a server rejected (401) is replaced, unless another caller already replaced it")
    func replacingRejectedToken() async throws {
        let harness = try await SignInHarness.signedIn()
        let first = try await harness.token().get()
        let second = try await harness.token(replacing: first).get()
        #expect(second.refreshed && second.value != first.value)
        let third = try await harness.token(replacing: first).get()
        #expect(third.value == second.value && !third.refreshed, "already replaced: no second refresh")
        #expect(try await harness.refreshCount() == 1)
    }

    @Test("nobody signed in: notSignedIn, a login hint category")
    func notSignedIn() async throws {
        let directory = try TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let session = try SharedSession(
            group: "test.empty", store: PlainFileStore(directory: directory.path), environment: ["XDG_STATE_HOME": directory.path])
        await #expect {
            _ = try await session.validAccessToken()
        } throws: { error in
            guard let error = error as? AuthKitError, case .notSignedIn = error else { return false }
            return error.category == .loginNeeded
        }
    }
}
