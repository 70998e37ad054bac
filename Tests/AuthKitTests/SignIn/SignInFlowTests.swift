import Foundation
import JOSE
import Testing
import TestSupport
@testable import AuthKit

// Every sign-in case runs
// against a real provider from Tests/Peers (our authlib provider unless the test says otherwise;
// oidc-provider-mock for the confidential client, glewlwyd as a second PKCE-checking provider),
// driven by the scripted browser. Tokens go to a plain-file store in a temporary folder; the
// real Secret Service path is in RefreshRaceTests (authkit login/token in a private keyring).

extension Result {
    var failureValue: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}

/// The sign-in's error, or a recorded issue when it succeeded.
func expectFailure(_ result: Result<SignInResult, AuthKitError>, sourceLocation: SourceLocation = #_sourceLocation) throws -> AuthKitError {
    try #require(result.failureValue, "the sign-in should have failed", sourceLocation: sourceLocation)
}

@Suite("SignInFlow against real providers")
struct SignInFlowTests {
    // MARK: Success paths

    @Test("full sign-in (public client, PKCE, browser via $BROWSER-style launcher) stores the tokens the provider issued")
    func fullSignInStoresTokens() async throws {
        let harness = try await SignInHarness.start()
        let result = try await harness.run(harness.flow(try harness.profile())).get()
        #expect(result.account.account == "ada@example.test")
        #expect(result.account.name == "Ada Lovelace")

        let records = try await harness.records()
        try #require(records.count == 1)
        let record = records[0]
        let ada = try #require(harness.provider.users.first { $0["username"] == "ada" })
        #expect(record.subject == ada["sub"].string)
        #expect(record.issuer == harness.provider.issuer.absoluteString)
        #expect(record.configuredIssuer == harness.provider.issuer.absoluteString)
        #expect(record.clientID == harness.provider.publicClient?.clientID)
        #expect(record.clientSecret == nil)
        #expect(record.tokenEndpoint.description == harness.provider.issuer.absoluteString + "/token")
        #expect(record.jwksURI.description == harness.provider.issuer.absoluteString + "/jwks")
        #expect(record.revocationEndpoint?.description == harness.provider.issuer.absoluteString + "/revoke")
        #expect(record.scopes.contains("offline_access"))
        #expect(record.generation == 1)
        #expect(record.idTokenVerifiedAt != nil)

        // The stored tokens are the ones the provider issued, and it still considers them live.
        let issued = try await harness.provider.issued()["items"].array
        func active(_ kind: String) -> [String] {
            issued.filter { $0["kind"].string == kind && $0["active"].bool != false }.compactMap { $0["value"].string }
        }
        #expect(active("access_token") == [record.accessToken])
        #expect(active("refresh_token") == [record.refreshToken].compactMap { $0 })
        #expect(active("id_token").contains(record.idToken ?? "-"))

        // PKCE, state and nonce went over the wire: the provider saw them (names only in its log).
        let log = try await harness.provider.log()
        let authorize = try #require(log.requests.first { $0["endpoint"] == "authorize" })
        let sent = Set(authorize["params"].array.compactMap(\.string))
        #expect(sent.isSuperset(of: ["code_challenge", "code_challenge_method", "state", "nonce", "redirect_uri", "response_type"]))
        let token = try #require(log.requests.first { $0["endpoint"] == "token" })
        #expect(token["grant_type"] == "authorization_code")
        #expect(token["params"].array.contains("code_verifier"))
        #expect(token["basic_auth"] == false)
        #expect(log.count(grantType: "authorization_code") == 1)
        try await harness.expectNoSecretsLeaked()
    }

    @Test("public client with PKCE against glewlwyd (Debian's C provider): full sign-in")
    func publicClientAgainstGlewlwyd() async throws {
        let harness = try await SignInHarness.start(.glewlwyd)
        let result = try await harness.run(harness.flow(try harness.profile())).get()
        let record = try #require(try await harness.records().first)
        #expect(record.issuer == harness.provider.issuer.absoluteString)
        #expect(record.clientSecret == nil)
        #expect(record.refreshToken != nil)
        #expect(result.account.account.hasPrefix("ada"))
        try await harness.expectNoSecretsLeaked()
    }

    @Test("confidential client (client secret, HTTP Basic) against oidc-provider-mock")
    func confidentialClientAgainstMock() async throws {
        let harness = try await SignInHarness.start(.mock)
        _ = try await harness.run(harness.flow(try harness.profile(confidential: true))).get()
        let record = try #require(try await harness.records().first)
        #expect(record.clientSecret == harness.provider.confidentialClient?.clientSecret)
        #expect(record.idToken != nil)
        let log = try await harness.provider.log()
        let token = try #require(log.requests.first { $0["endpoint"] == "token" })
        #expect(token["basic_auth"] == true, "the secret goes in HTTP Basic, not the form")
        #expect(!token["params"].array.contains("client_secret"))
        try await harness.expectNoSecretsLeaked()
    }

    @Test(
        "a wrong code_verifier is refused by the provider (authkit's PKCE is what the provider checks)",
        arguments: [OIDCTestProvider.Implementation.authlib, .glewlwyd])
    func wrongCodeVerifierIsRejected(_ implementation: OIDCTestProvider.Implementation) async throws {
        let harness = try await SignInHarness.start(implementation)
        let forged = try PKCEVerifier()
        let tampering = InterceptingTransport(rewrite: { request in
            InterceptingTransport.replacingField("code_verifier", with: forged.value, in: request)
        })
        let result = await harness.run(harness.flow(try harness.profile(), transport: tampering))
        let error = try expectFailure(result)
        guard case .tokenEndpoint(.oauth(let code, _, let status)) = error else {
            Issue.record("expected an OAuth error from the token endpoint, got \(error)")
            return
        }
        if implementation == .glewlwyd {
            #expect(code == "invalid_code" && status == 403, "glewlwyd's answer to a wrong verifier")
        } else {
            #expect(code == "invalid_grant" && status == 400)
        }
        #expect(try await harness.itemCount() == 0, "nothing is stored")
        try await harness.expectNoSecretsLeaked()
    }

    @Test("paste mode: the pasted final URL completes the sign-in; a pasted URL with another state is refused and the wait goes on")
    func pasteMode() async throws {
        let harness = try await SignInHarness.start()
        let urls = Mailbox<URL>()
        let (pasted, paste) = AsyncStream.makeStream(of: String.self)
        let running = Task {
            await harness.run(harness.flow(try harness.profile()), mode: .paste, pasted: pasted) { event in
                if case .openURL(let url, let browser) = event, browser == nil { urls.put(url) }
            }
        }
        let url = try #require(await urls.next())
        let redirect = try await harness.finalRedirect(for: url)
        var components = try #require(URLComponents(url: redirect, resolvingAgainstBaseURL: false))
        components.queryItems = components.queryItems?.map { $0.name == "state" ? URLQueryItem(name: "state", value: "not-this-one") : $0 }
        paste.yield(try #require(components.url).absoluteString)
        paste.yield("  \(redirect.absoluteString)\n")
        let result = try await running.value.get()
        paste.finish()
        #expect(result.account.account == "ada@example.test")
        #expect(harness.transcript.all.filter { $0.hasPrefix("refused(") }.count == 1, "the URL with another state was refused")
        // The redirect (holding the code) is handed to this test on purpose; authkit must not repeat it.
        try await harness.expectNoSecretsLeaked()
    }

    // MARK: The redirect

    /// The receiver answers a callback with a 303 to its clean result page (no query): follow
    /// it as a browser would.
    /// The 303 a callback that ends the sign-in gets, to its clean result page. The page itself
    /// is not fetched here: the flow closes the receiver once it has ended (waiting a grace
    /// period for the browser), and whether this test's fetch comes within it depends only on
    /// how busy the machine is. LoopbackRedirectReceiverTests fetch the pages from a receiver
    /// that stays open.
    static func expectRedirect(_ response: TestHTTPResponse, to word: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(response.status == 303, "\(response.status)", sourceLocation: sourceLocation)
        #expect(response.headers["location"] == "/authkit/" + word, sourceLocation: sourceLocation)
    }

    /// Follows the receiver's redirect, for callbacks that leave the sign-in waiting (the
    /// receiver is still open).
    static func followReceiver(_ response: TestHTTPResponse, port: Int) async throws -> TestHTTPResponse {
        guard response.status == 303 else { return response }
        let location = try #require(response.headers["location"])
        #expect(location.hasPrefix("/") && !location.contains("?"), "\(location)")
        return try await TestHTTP.get(try #require(URL(string: "http://127.0.0.1:\(port)\(location)")))
    }

    @Test("wrong state, missing state, wrong path and replayed callbacks don't end the wait; the genuine one still completes")
    func strayCallbacksDoNotEndTheWait() async throws {
        let harness = try await SignInHarness.start()
        let (running, url) = try await harness.startWithoutBrowser()

        // A genuine callback of another sign-in (its own state and code), to replay here.
        let client = try #require(harness.provider.publicClient)
        let other = try AuthorizationRequest(
            authorizationEndpoint: harness.provider.issuer.appendingPathComponent("authorize"), clientID: client.clientID,
            redirectURI: "http://127.0.0.1:49231/", scopes: ["openid"])
        let otherRedirect = try await harness.finalRedirect(for: other.url)

        // This sign-in's genuine callback, held back while the strays arrive.
        let redirect = try await harness.finalRedirect(for: url)
        let receiverPort = try #require(redirect.port)
        let genuineQuery = try #require(redirect.query)
        let fields = try #require(FormEncoding.decode(genuineQuery))
        func target(_ path: String, _ fields: [(name: String, value: String)]) -> URL {
            URL(string: "http://127.0.0.1:\(receiverPort)\(path)?\(FormEncoding.encode(fields))")!
        }
        let withoutState = fields.filter { $0.name != "state" }
        let wrongState = fields.map { $0.name == "state" ? ($0.name, "0123456789abcdef0123456789abcdef0123456789a") : $0 }
        let strays = [
            target("/", wrongState),
            target("/", withoutState),
            target("/elsewhere", fields),
            URL(string: "http://127.0.0.1:\(receiverPort)/?\(try #require(otherRedirect.query))")!,
        ]
        for stray in strays {
            let answer = try await Self.followReceiver(TestHTTP.get(stray), port: receiverPort)
            #expect((400..<500).contains(answer.status), "\(stray.path) answered \(answer.status)")
            #expect(answer.text.contains("<h1>"))
        }
        // The wait is still on: nothing was exchanged.
        #expect(try await harness.provider.log().count(endpoint: "token") == 0)

        Self.expectRedirect(try await TestHTTP.get(redirect), to: "signed-in")
        let result = try await running.value.get()
        #expect(result.account.account == "ada@example.test")

        // The genuine callback replayed: not a second sign-in (the listener is closed, or says so).
        do {
            let replay = try await Self.followReceiver(TestHTTP.get(redirect), port: receiverPort)
            #expect(replay.status == 410)
        } catch is TestHTTPError {}
        #expect(try await harness.provider.log().count(grantType: "authorization_code") == 1)
        #expect(try await harness.records().count == 1)
        let refusals = harness.transcript.all.filter { $0.hasPrefix("refused(") }
        #expect(refusals.count == 3, "wrong state, missing state and the other sign-in's state are reported: \(refusals)")
        try await harness.expectNoSecretsLeaked()
    }

    @Test("an error callback with the right state (the person denies) ends the sign-in with the provider's error")
    func errorCallback() async throws {
        let harness = try await SignInHarness.start()
        let result = await harness.run(harness.flow(try harness.profile(), browser: harness.browser(deny: true)))
        let error = try expectFailure(result)
        guard case .authorization(.providerError(let code, _, _)) = error else {
            Issue.record("expected the provider's error, got \(error)")
            return
        }
        #expect(code == "access_denied")
        // Declining is "not signed in" (exit 1), as a declined device code is; other provider
        // errors stay provider errors (below).
        #expect(error.category == .loginNeeded)
        #expect(try await harness.itemCount() == 0)
        #expect(try await harness.provider.log().count(endpoint: "token") == 0)

        // The provider's own description reaches the person.
        try await harness.provider.setFault(.authorizeError("temporarily_unavailable", description: "Maintenance until noon"))
        let second = try expectFailure(await harness.run(harness.flow(try harness.profile())))
        guard case .authorization(.providerError("temporarily_unavailable", "Maintenance until noon", _)) = second else {
            Issue.record("expected the provider's description, got \(second)")
            return
        }
        #expect(second.description.contains("Maintenance until noon"))
        #expect(second.category == .provider)
        try await harness.expectNoSecretsLeaked()
    }

    @Test("a wrong iss in the redirect (RFC 9207 mix-up defence) fails the sign-in before any code exchange")
    func wrongIssuerInRedirect() async throws {
        let harness = try await SignInHarness.start()
        try await harness.provider.setFault(.authorizeWrongIssuer)
        let error = try expectFailure(await harness.run(harness.flow(try harness.profile())))
        guard case .authorization(.issuerMismatch(let expected)) = error else {
            Issue.record("expected issuerMismatch, got \(error)")
            return
        }
        #expect(expected == harness.provider.issuer.absoluteString)
        #expect(try await harness.provider.log().count(endpoint: "token") == 0)
        #expect(try await harness.itemCount() == 0)
        try await harness.expectNoSecretsLeaked()
    }

    @Test("an error redirect with a wrong iss is refused as a mix-up, not shown as the provider's error (RFC 9207 §2.4)")
    func wrongIssuerOnErrorRedirect() async throws {
        let harness = try await SignInHarness.start()
        try await harness.provider.process.control(
            "POST", "/_test/faults",
            json: [
                "faults": [
                    ProviderFault.authorizeError("access_denied", description: "Injected by a mix-up").json,
                    ProviderFault.authorizeWrongIssuer.json,
                ]
            ])
        let error = try expectFailure(await harness.run(harness.flow(try harness.profile())))
        guard case .authorization(.issuerMismatch) = error else {
            Issue.record("expected issuerMismatch, got \(error)")
            return
        }
        #expect(!error.description.contains("Injected by a mix-up"), "text from the wrong issuer is not shown")
    }

    @Test("a missing iss when discovery advertises authorization_response_iss_parameter_supported fails the sign-in")
    func missingIssuerWhenAdvertised() async throws {
        let harness = try await SignInHarness.start()
        try await harness.provider.setFault(.authorizeNoIssuer)
        let error = try expectFailure(await harness.run(harness.flow(try harness.profile())))
        guard case .authorization(.missingIssuer) = error else {
            Issue.record("expected missingIssuer, got \(error)")
            return
        }
        #expect(try await harness.provider.log().count(endpoint: "token") == 0)
        #expect(try await harness.itemCount() == 0)
    }

    @Test("without the advertisement, a redirect without iss is fine")
    func missingIssuerNotAdvertised() async throws {
        let harness = try await SignInHarness.start(
            options: {
                var o = OIDCTestProvider.Options(); o.issParameter = false; return o
            }())
        _ = try await harness.run(harness.flow(try harness.profile())).get()
        #expect(try await harness.itemCount() == 1)
    }

    @Test("no callback within the timeout ends the wait with a clear message; the listener is closed, nothing stored")
    func timeout() async throws {
        let harness = try await SignInHarness.start()
        let urls = Mailbox<URL>()
        let result = await harness.run(harness.flow(try harness.profile()), mode: .noBrowser, timeout: .seconds(1)) { event in
            if case .openURL(let url, _) = event { urls.put(url) }
        }
        let error = try expectFailure(result)
        guard case .authorization(.noCallback(seconds: 1, let clientID, let redirectURI)) = error else {
            Issue.record("expected noCallback, got \(error)")
            return
        }
        // The likely causes, with the exact redirect URI this sign-in used.
        #expect(error.description.contains("no sign-in came back within 1 s"))
        #expect(error.description.contains("client id ‘\(clientID)’") && error.description.contains(redirectURI))
        #expect(redirectURI.hasPrefix("http://127.0.0.1:"))
        #expect(error.category == .loginNeeded)
        let url = try #require(await urls.next(timeout: .seconds(1)))
        let port = try #require(URLComponents(string: TestHTTP.queryItems(url)["redirect_uri"] ?? "")?.port)
        await #expect(throws: TestHTTPError.self, "the listener is closed") {
            _ = try await TestHTTP.get(URL(string: "http://127.0.0.1:\(port)/?state=x&code=y")!)
        }
        #expect(try await harness.itemCount() == 0)
    }

    @Test("Microsoft-style {tenantid} issuer: discovery publishes the template, the id_token names the tenant's issuer")
    func tenantTemplateIssuer() async throws {
        let tenant = "9188040d-6c67-4c5b-b112-36a304b66dad"
        let harness = try await SignInHarness.start(
            options: {
                var o = OIDCTestProvider.Options(); o.issuerPath = "/{tenantid}/v2.0"; o.tenantID = tenant; return o
            }())
        var profile = try harness.profile()
        let base = harness.provider.baseURL.absoluteString
        profile.issuer = base + "/{tenantid}/v2.0"
        profile.tenant = "common"
        _ = try await harness.run(harness.flow(profile)).get()
        let record = try #require(try await harness.records().first)
        #expect(record.issuer == "\(base)/\(tenant)/v2.0")
        #expect(record.configuredIssuer == "\(base)/{tenantid}/v2.0")
        #expect(record.tenantID == tenant)
        #expect(
            record.tokenEndpoint.description.hasPrefix("\(base)/common/v2.0/"),
            "endpoints of the tenant asked (common): \(record.tokenEndpoint)")

        // And a refresh checks the refreshed id_token against the tenant's issuer.
        try await harness.expireAccessToken()
        let token = try await harness.token().get()
        #expect(token.refreshed)
    }

    // MARK: The id_token

    @Test("an id_token with the wrong nonce is refused; nothing is stored")
    func badNonce() async throws {
        let harness = try await SignInHarness.start()
        try await harness.provider.setFault(.idTokenWrongNonce)
        let error = try expectFailure(await harness.run(harness.flow(try harness.profile())))
        guard case .idToken(.nonceMismatch) = error else {
            Issue.record("expected nonceMismatch, got \(error)")
            return
        }
        #expect(try await harness.itemCount() == 0)
        try await harness.expectNoSecretsLeaked()
    }

    @Test("an expired id_token is refused; nothing is stored")
    func expiredIDToken() async throws {
        let harness = try await SignInHarness.start()
        try await harness.provider.setFault(.idTokenExpired)
        let error = try expectFailure(await harness.run(harness.flow(try harness.profile())))
        guard case .idToken(.expired) = error else {
            Issue.record("expected expired, got \(error)")
            return
        }
        #expect(try await harness.itemCount() == 0)
    }

    @Test("an id_token signed by a key missing from the JWKS is refused after exactly one refetch")
    func keyMissingFromJWKS() async throws {
        let harness = try await SignInHarness.start()
        try await harness.provider.setFault(.idTokenUnknownKey)
        let error = try expectFailure(await harness.run(harness.flow(try harness.profile())))
        guard case .idToken(.unknownKeyID) = error else {
            Issue.record("expected unknownKeyID, got \(error)")
            return
        }
        #expect(try await harness.provider.log().count(endpoint: "jwks") == 2, "the first fetch and one refetch")
        #expect(try await harness.itemCount() == 0)
    }

    @Test("key rotation (new kid) is picked up with exactly one refetch")
    func keyRotation() async throws {
        let harness = try await SignInHarness.start()
        _ = try await harness.run(harness.flow(try harness.profile())).get()
        #expect(try await harness.provider.log().count(endpoint: "jwks") == 1)
        let newKid = try await harness.provider.rotateKeys(keepOld: false)
        _ = try await harness.run(harness.flow(try harness.profile())).get()
        #expect(try await harness.provider.log().count(endpoint: "jwks") == 2)
        let record = try #require(try await harness.records().first)
        let header = try #require(TestPKCE.unverifiedJWTParts(record.idToken ?? "")?.header)
        #expect(header["kid"].string == newKid)
        #expect(record.generation == 2, "a second sign-in of the same account continues its generation")
    }

    @Test("a bad signature under a known kid is refused without refetching the JWKS")
    func noRefetchOnBadSignature() async throws {
        let harness = try await SignInHarness.start()
        try await harness.provider.setFault(.idTokenBadSignature)
        let error = try expectFailure(await harness.run(harness.flow(try harness.profile())))
        guard case .idToken(.badSignature) = error else {
            Issue.record("expected badSignature, got \(error)")
            return
        }
        #expect(try await harness.provider.log().count(endpoint: "jwks") == 1)
        #expect(try await harness.itemCount() == 0)
    }

    @Test("a wrong audience in the id_token is refused")
    func wrongAudience() async throws {
        let harness = try await SignInHarness.start()
        try await harness.provider.setFault(.idTokenWrongAudience)
        let error = try expectFailure(await harness.run(harness.flow(try harness.profile())))
        guard case .idToken(.wrongAudience) = error else {
            Issue.record("expected wrongAudience, got \(error)")
            return
        }
        #expect(try await harness.itemCount() == 0)
    }

    // MARK: Failures of the provider

    @Test("the provider down between authorization and token exchange: a typed error, nothing stored")
    func providerDownMidFlow() async throws {
        let harness = try await SignInHarness.start()
        let (running, url) = try await harness.startWithoutBrowser()
        let redirect = try await harness.finalRedirect(for: url)
        let secrets = try await harness.provider.issuedSecrets()
        let provider = harness.provider
        try await offThePool { provider.stop() }
        Self.expectRedirect(try await TestHTTP.get(redirect), to: "signed-in")
        let error = try expectFailure(await running.value)
        guard case .tokenEndpoint(.transport(let transport)) = error else {
            Issue.record("expected a transport error at the token endpoint, got \(error)")
            return
        }
        #expect(transport.isSafeToRetry, "connection refused: \(transport)")
        #expect(error.category == .provider)
        #expect(try await harness.itemCount() == 0)
        for secret in secrets where secret.count >= 8 {
            #expect(!harness.transcript.all.contains { $0.contains(secret) })
        }
    }

    // MARK: Device authorization grant (RFC 8628)

    static let fastDevice = {
        var o = OIDCTestProvider.Options(); o.deviceInterval = 1; return o
    }()

    /// Runs a device sign-in; `approve` is called with the user code once the flow shows it.
    func deviceSignIn(
        _ harness: SignInHarness, approve: @escaping @Sendable (DeviceAuthorization) async -> Void
    ) async throws -> (Result<SignInResult, AuthKitError>, [String]) {
        let codes = Mailbox<DeviceAuthorization>()
        let pending = Transcript()
        let running = Task {
            await harness.run(harness.flow(try harness.profile()), mode: .deviceCode, timeout: .seconds(60)) { event in
                switch event {
                case .deviceCode(let authorization): codes.put(authorization)
                case .devicePending(let slowDown): pending.add(slowDown ? "slow_down" : "pending")
                default: break
                }
            }
        }
        let authorization = try #require(await codes.next())
        await approve(authorization)
        return (try await running.value, pending.all)
    }

    @Test("device grant: authorization_pending, then approved on the verification page")
    func deviceGrantApproved() async throws {
        let harness = try await SignInHarness.start(options: Self.fastDevice)
        let (result, events) = try await deviceSignIn(harness) { authorization in
            // Let the flow poll at least once before approving.
            while await (try? harness.provider.log().count(grantType: "urn:ietf:params:oauth:grant-type:device_code")) ?? 0 < 1 {
                try? await Task.sleep(for: .milliseconds(100))
            }
            let approved = try? await harness.approveDevice(authorization, user: "grace")
            #expect(approved?.status == 0, "\(approved?.stderr ?? "")")
        }
        let signedIn = try result.get()
        #expect(signedIn.account.account == "grace@example.test")
        #expect(events.first == "pending")
        #expect(try await harness.records().first?.refreshToken != nil)
        try await harness.expectNoSecretsLeaked()
    }

    @Test("device grant: slow_down makes the flow poll less often, and it still completes")
    func deviceGrantSlowDown() async throws {
        let harness = try await SignInHarness.start(options: Self.fastDevice)
        try await harness.provider.setFault(.deviceSlowDown)
        let (result, events) = try await deviceSignIn(harness) { authorization in
            while await (try? harness.provider.log().count(grantType: "urn:ietf:params:oauth:grant-type:device_code")) ?? 0 < 1 {
                try? await Task.sleep(for: .milliseconds(100))
            }
            _ = try? await harness.approveDevice(authorization)
        }
        _ = try result.get()
        #expect(events.contains("slow_down"))
        // After slow_down the interval grew by 5 s (RFC 8628 §3.5): the next poll came that much later.
        let polls = try await harness.provider.log().requests.filter { $0["endpoint"] == "token" }.compactMap { request -> Double? in
            if case .number(let at) = request["at"] { return at } else { return nil }
        }
        try #require(polls.count >= 2)
        #expect(polls[1] - polls[0] >= 5.5, "the poll after slow_down waited interval + 5 s")
    }

    @Test("device grant: the sign-in's timeout bounds the wait for approval too")
    func deviceGrantTimeout() async throws {
        let harness = try await SignInHarness.start(options: Self.fastDevice)
        let outcome = Mailbox<Result<SignInResult, AuthKitError>>()
        let running = Task {
            outcome.put(await harness.run(harness.flow(try harness.profile()), mode: .deviceCode, timeout: .seconds(2)))
        }
        defer { running.cancel() }
        // The provider's device code lives 600 s; the sign-in must give up long before.
        let result = try #require(await outcome.next(timeout: .seconds(30)), "the device sign-in ignored its timeout")
        let error = try expectFailure(result)
        guard case .device(.timedOut(seconds: 2)) = error else {
            Issue.record("expected timedOut, got \(error)")
            return
        }
        #expect(error.category == .loginNeeded)
        #expect(try await harness.itemCount() == 0)
    }

    @Test("device grant: access_denied on the verification page ends the sign-in")
    func deviceGrantDenied() async throws {
        let harness = try await SignInHarness.start(options: Self.fastDevice)
        let (result, _) = try await deviceSignIn(harness) { authorization in
            _ = try? await harness.approveDevice(authorization, deny: true)
        }
        let error = try expectFailure(result)
        guard case .device(.denied) = error else {
            Issue.record("expected denied, got \(error)")
            return
        }
        #expect(error.category == .loginNeeded)
        #expect(try await harness.itemCount() == 0)
    }

    @Test("device grant: expired_token (the code expired before approval) ends the sign-in")
    func deviceGrantExpired() async throws {
        let harness = try await SignInHarness.start(options: Self.fastDevice)
        try await harness.provider.setFault(.error("expired_token", grantType: "urn:ietf:params:oauth:grant-type:device_code"))
        let (result, _) = try await deviceSignIn(harness) { _ in }
        let error = try expectFailure(result)
        guard case .device(.expired) = error else {
            Issue.record("expected expired, got \(error)")
            return
        }
        // The provider's own expiry (device_expires_in), not a fault: the same typed error.
        _ = try await harness.provider.configure(["device_expires_in": 2])
        let (second, _) = try await deviceSignIn(harness) { _ in }
        guard case .device(.expired) = try expectFailure(second) else {
            Issue.record("expected expired, got \(String(describing: second.failureValue))")
            return
        }
        #expect(try await harness.itemCount() == 0)
    }

    // MARK: Bad input

    @Test("malformed discovery documents, token responses and key sets are typed errors; nothing is stored", arguments: BadAnswer.all)
    func badProviderAnswers(_ bad: BadAnswer) async throws {
        let harness = try await SignInHarness.start()
        try await harness.provider.setFault(bad.fault)
        let error = try expectFailure(await harness.run(harness.flow(try harness.profile())))
        #expect(bad.matches(error), "\(bad.name): got \(error)")
        #expect(try await harness.itemCount() == 0, "nothing is written unless the id_token validated")
        #expect(!error.description.isEmpty)
        #expect(
            try await harness.provider.log().count(endpoint: "token") <= 1,
            "never sent twice (no retry after an answer or a lost connection)")
        try await harness.expectNoSecretsLeaked()
    }

    @Test("a callback with the right state but neither code nor error ends the sign-in as malformed; nothing is stored")
    func malformedCallbackWithRightState() async throws {
        let harness = try await SignInHarness.start()
        let (running, url) = try await harness.startWithoutBrowser()
        let query = TestHTTP.queryItems(url)
        let redirectURI = try #require(query["redirect_uri"])
        let port = try #require(URLComponents(string: redirectURI)?.port)
        let state = try #require(query["state"])
        let iss = harness.provider.issuer.absoluteString
        let callback = try #require(URL(string: "http://127.0.0.1:\(port)/?" + FormEncoding.encode([("state", state), ("iss", iss)])))
        Self.expectRedirect(try await TestHTTP.get(callback), to: "failed")
        let error = try expectFailure(await running.value)
        guard case .authorization(.malformedCallback) = error else {
            Issue.record("expected malformedCallback, got \(error)")
            return
        }
        #expect(try await harness.itemCount() == 0)
    }
}

/// A provider answer authkit must refuse, and the typed error it must become.
struct BadAnswer: Sendable, CustomStringConvertible {
    var name: String
    var fault: ProviderFault
    var matches: @Sendable (AuthKitError) -> Bool
    var description: String { name }

    static let all: [BadAnswer] = [
        BadAnswer(name: "discovery names another issuer", fault: .patchJSON("discovery", ["issuer": "http://127.0.0.1:1/other"])) {
            if case .discovery(.issuerMismatch) = $0 { return true } else { return false }
        },
        BadAnswer(name: "discovery issuer is not a string", fault: .patchJSON("discovery", ["issuer": 5])) {
            if case .discovery(.malformedDocument) = $0 { return true } else { return false }
        },
        BadAnswer(
            name: "discovery token endpoint on plain http off loopback",
            fault: .patchJSON("discovery", ["token_endpoint": "http://login.example.com/token"])
        ) {
            if case .discovery(.insecureEndpoint) = $0 { return true } else { return false }
        },
        BadAnswer(name: "discovery without jwks_uri", fault: .patchJSON("discovery", ["jwks_uri": nil])) {
            if case .discovery(.malformedDocument) = $0 { return true } else { return false }
        },
        BadAnswer(name: "discovery offers only plain PKCE", fault: .patchJSON("discovery", ["code_challenge_methods_supported": ["plain"]]))
        {
            if case .discovery(.unsupported) = $0 { return true } else { return false }
        },
        BadAnswer(name: "discovery is not JSON", fault: .malformed("discovery", body: "<html>sign in</html>")) {
            if case .discovery(.malformedDocument) = $0 { return true } else { return false }
        },
        BadAnswer(name: "discovery answers 500", fault: .http500("discovery")) {
            if case .discovery(.httpStatus(500, _)) = $0 { return true } else { return false }
        },
        BadAnswer(name: "token answer is truncated JSON", fault: .malformed("token")) {
            if case .tokenEndpoint(.malformedResponse) = $0 { return true } else { return false }
        },
        BadAnswer(name: "token answer without access_token", fault: .patchJSON("token", ["access_token": nil])) {
            if case .tokenEndpoint(.malformedResponse) = $0 { return true } else { return false }
        },
        BadAnswer(name: "token answer of type MAC", fault: .patchJSON("token", ["token_type": "MAC"])) {
            if case .tokenEndpoint(.unsupportedTokenType) = $0 { return true } else { return false }
        },
        BadAnswer(name: "token answer with negative expires_in", fault: .patchJSON("token", ["expires_in": -5])) {
            if case .tokenEndpoint(.malformedResponse) = $0 { return true } else { return false }
        },
        BadAnswer(name: "token answer with a number for a token", fault: .patchJSON("token", ["refresh_token": 12345])) {
            if case .tokenEndpoint(.malformedResponse) = $0 { return true } else { return false }
        },
        BadAnswer(name: "token answer without id_token", fault: .idTokenOmitted) {
            if case .missingIDToken = $0 { return true } else { return false }
        },
        BadAnswer(name: "token answer with a garbage id_token", fault: .patchJSON("token", ["id_token": "not.a.jwt"])) {
            if case .idToken = $0 { return true } else { return false }
        },
        BadAnswer(
            name: "token answer is an HTML page",
            fault: ProviderFault(kind: "malformed", ["endpoint": "token", "body": "<html>oops</html>", "content_type": "text/html"])
        ) {
            if case .tokenEndpoint(.malformedResponse) = $0 { return true } else { return false }
        },
        BadAnswer(name: "token endpoint answers 500", fault: .http500("token")) {
            if case .tokenEndpoint(.httpStatus(500)) = $0 { return true } else { return false }
        },
        // invalid_client at the code exchange is the configuration, not an outage.
        BadAnswer(
            name: "token endpoint: RFC 6749 §5.2 invalid_client",
            fault: .error("invalid_client", description: "Unknown client", status: 401)
        ) {
            if case .clientRejected(_, "invalid_client", "Unknown client") = $0 { return true } else { return false }
        },
        BadAnswer(name: "token endpoint drops the connection", fault: .close("token")) {
            if case .tokenEndpoint(.transport) = $0 { return true } else { return false }
        },
        BadAnswer(name: "key set is not JSON", fault: ProviderFault.malformed("jwks", body: "not json").untilCleared) {
            if case .keys(.invalid) = $0 { return true } else { return false }
        },
        BadAnswer(
            name: "key set has no keys member of the right type", fault: ProviderFault.malformed("jwks", body: "{\"keys\": 5}").untilCleared
        ) {
            if case .keys(.invalid) = $0 { return true } else { return false }
        },
        BadAnswer(name: "key set is empty", fault: ProviderFault.malformed("jwks", body: "{\"keys\": []}").untilCleared) {
            if case .idToken(.unknownKeyID) = $0 { return true } else { return false }
        },
        BadAnswer(name: "key set answers 500", fault: ProviderFault.http500("jwks").untilCleared) {
            if case .keys(.httpStatus(500, _)) = $0 { return true } else { return false }
        },
    ]
}
