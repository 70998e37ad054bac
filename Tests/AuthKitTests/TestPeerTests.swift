import Foundation
import Testing
import TestSupport

// The test peers must be strict, or the sign-in tests that run against them prove nothing:
// these tests talk raw HTTP to the providers (no AuthKit code) and show that a wrong PKCE
// verifier, a replayed code or a rotated-out refresh token really fail there.
// Peers: Tests/Peers/README.md. A missing .venv fails every test with "run ./scripts/test".

/// A redirect URI on a loopback port nobody listens on: the scripted browser only reports
/// the redirect (`--print-redirect`), and the provider must accept any port (RFC 8252 §7.3).
private let redirectURI = "http://127.0.0.1:49231/callback"

private struct Authorization {
    var redirect: URL
    var query: [String: String]
    var state: String
    var nonce: String
}

private func randomToken() -> String { TestPKCE.base64URL(Data((0..<16).map { _ in UInt8.random(in: 0...255) })) }

/// Runs the authorization request through the scripted browser and returns the redirect back.
private func authorize(
    _ provider: OIDCTestProvider, clientID: String, pkce: TestPKCE?, method: String = "S256",
    scope: String = "openid profile email offline_access", user: String = "ada", deny: Bool = false
) async throws -> Authorization {
    let discovery = try await provider.discovery()
    let endpoint = try #require(discovery["authorization_endpoint"].string)
    let state = randomToken(), nonce = randomToken()
    var fields = [
        ("response_type", "code"), ("client_id", clientID), ("redirect_uri", redirectURI), ("scope", scope),
        ("state", state), ("nonce", nonce),
    ]
    if let pkce { fields += [("code_challenge", method == "plain" ? pkce.verifier : pkce.challenge), ("code_challenge_method", method)] }
    let url = try #require(URL(string: endpoint + "?" + TestHTTP.formEncode(fields)))
    let redirect = try ScriptedBrowser(user: user, deny: deny, for: provider).finalRedirect(for: url)
    #expect(redirect.absoluteString.hasPrefix(redirectURI))
    return Authorization(redirect: redirect, query: TestHTTP.queryItems(redirect), state: state, nonce: nonce)
}

private func tokenRequest(
    _ provider: OIDCTestProvider, _ fields: [(String, String)], basicAuth: (String, String)? = nil
) async throws -> TestHTTPResponse {
    let discovery = try await provider.discovery()
    let endpoint = try #require(discovery["token_endpoint"].string.flatMap(URL.init(string:)))
    return try await TestHTTP.postForm(endpoint, fields, basicAuth: basicAuth)
}

private func exchange(
    _ provider: OIDCTestProvider, code: String, clientID: String, verifier: String?
) async throws -> TestHTTPResponse {
    var fields = [("grant_type", "authorization_code"), ("code", code), ("redirect_uri", redirectURI), ("client_id", clientID)]
    if let verifier { fields.append(("code_verifier", verifier)) }
    return try await tokenRequest(provider, fields)
}

private func refresh(_ provider: OIDCTestProvider, _ refreshToken: String, clientID: String) async throws -> TestHTTPResponse {
    try await tokenRequest(provider, [("grant_type", "refresh_token"), ("refresh_token", refreshToken), ("client_id", clientID)])
}

/// Signs in with the public client and returns the token response.
private func signIn(_ provider: OIDCTestProvider) async throws -> (tokens: PeerJSON, authorization: Authorization) {
    let client = try #require(provider.publicClient)
    let pkce = TestPKCE()
    let authorization = try await authorize(provider, clientID: client.clientID, pkce: pkce)
    let code = try #require(authorization.query["code"], "no code in \(authorization.query.keys.sorted())")
    let response = try await exchange(provider, code: code, clientID: client.clientID, verifier: pkce.verifier)
    try #require(response.status == 200, "token endpoint said \(response.status): \(response.text)")
    return (try response.json(), authorization)
}

@Suite("Test peers are strict", .serialized)
struct TestPeerTests {
    @Test("The PKCE helper matches RFC 7636 appendix B")
    func pkceHelperMatchesRFC() {
        let pkce = TestPKCE(verifier: "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")
        #expect(pkce.challenge == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")
        #expect(TestPKCE().verifier.count == 64)
    }

    @Test("Discovery is well formed and the JWKS holds the signing key")
    func discoveryIsWellFormed() async throws {
        let provider = try OIDCTestProvider.start(
            options: {
                var o = OIDCTestProvider.Options(); o.jwksExtra = ["ES256", "EdDSA"]; return o
            }())
        let discovery = try await provider.discovery()
        #expect(discovery["issuer"].string == provider.issuer.absoluteString)
        for key in [
            "authorization_endpoint", "token_endpoint", "jwks_uri", "userinfo_endpoint", "revocation_endpoint",
            "device_authorization_endpoint",
        ] {
            #expect(discovery[key].string?.hasPrefix(provider.issuer.absoluteString) == true, "\(key)")
        }
        #expect(discovery["code_challenge_methods_supported"] == ["S256"])
        #expect(discovery["authorization_response_iss_parameter_supported"] == true)
        #expect(discovery["id_token_signing_alg_values_supported"].array.contains("RS256"))

        let jwksURL = try #require(discovery["jwks_uri"].string.flatMap(URL.init(string:)))
        let jwks = try await TestHTTP.get(jwksURL).json()
        let kids = jwks["keys"].array.compactMap { $0["kid"].string }
        #expect(kids.contains(provider.process.ready["kid"].string ?? "-"))
        #expect(Set(jwks["keys"].array.compactMap { $0["kty"].string }) == ["RSA", "EC", "OKP"])
        #expect(jwks["keys"].array.allSatisfy { $0["d"].isNull }, "the JWKS must not publish private parts")
    }

    @Test("A public client with the right code_verifier gets tokens; the response carries iss")
    func publicClientRightVerifier() async throws {
        let provider = try OIDCTestProvider.start()
        let (tokens, authorization) = try await signIn(provider)
        #expect(authorization.query["state"] == authorization.state)
        #expect(authorization.query["iss"] == provider.issuer.absoluteString)
        #expect(tokens["token_type"] == "Bearer")
        #expect(tokens["refresh_token"].string?.isEmpty == false)
        #expect(tokens["scope"].string?.split(separator: " ").contains("openid") == true)
        let idToken = try #require(tokens["id_token"].string)
        let (header, payload) = try #require(TestPKCE.unverifiedJWTParts(idToken))
        #expect(header["alg"] == "RS256")
        #expect(header["kid"].string == provider.process.ready["kid"].string)
        #expect(payload["iss"].string == provider.issuer.absoluteString)
        #expect(payload["aud"].string == provider.publicClient?.clientID)
        #expect(payload["nonce"].string == authorization.nonce)
        #expect(payload["preferred_username"] == "ada@example.test")
        #expect((payload["exp"].int ?? 0) > Int(Date().timeIntervalSince1970))
    }

    @Test("A WRONG code_verifier is refused with invalid_grant")
    func wrongVerifierFails() async throws {
        let provider = try OIDCTestProvider.start()
        let client = try #require(provider.publicClient)
        let pkce = TestPKCE()
        let authorization = try await authorize(provider, clientID: client.clientID, pkce: pkce)
        let code = try #require(authorization.query["code"])
        let response = try await exchange(provider, code: code, clientID: client.clientID, verifier: TestPKCE().verifier)
        #expect(response.status == 400)
        #expect(try response.json()["error"] == "invalid_grant")
        #expect(try response.json()["access_token"].isNull)
    }

    @Test("A code_verifier missing at the token endpoint is refused")
    func missingVerifierFails() async throws {
        let provider = try OIDCTestProvider.start()
        let client = try #require(provider.publicClient)
        let authorization = try await authorize(provider, clientID: client.clientID, pkce: TestPKCE())
        let code = try #require(authorization.query["code"])
        let response = try await exchange(provider, code: code, clientID: client.clientID, verifier: nil)
        #expect(response.status == 400)
        #expect(try response.json()["error"] == "invalid_grant")
    }

    @Test("No PKCE, or plain PKCE, from a public client fails at /authorize with state and iss")
    func pkceRequiredAtAuthorize() async throws {
        let provider = try OIDCTestProvider.start()
        let client = try #require(provider.publicClient)
        for (pkce, method) in [(nil, "S256"), (TestPKCE(), "plain")] as [(TestPKCE?, String)] {
            let authorization = try await authorize(provider, clientID: client.clientID, pkce: pkce, method: method)
            #expect(authorization.query["code"] == nil)
            #expect(authorization.query["error"] == "invalid_request")
            #expect(authorization.query["state"] == authorization.state)
            #expect(authorization.query["iss"] == provider.issuer.absoluteString)
        }
    }

    @Test("A replayed code fails and revokes what it issued")
    func codeReplay() async throws {
        let provider = try OIDCTestProvider.start()
        let client = try #require(provider.publicClient)
        let pkce = TestPKCE()
        let authorization = try await authorize(provider, clientID: client.clientID, pkce: pkce)
        let code = try #require(authorization.query["code"])
        let first = try await exchange(provider, code: code, clientID: client.clientID, verifier: pkce.verifier)
        #expect(first.status == 200)
        let second = try await exchange(provider, code: code, clientID: client.clientID, verifier: pkce.verifier)
        #expect(second.status == 400)
        #expect(try second.json()["error"] == "invalid_grant")
        let refreshToken = try #require(try first.json()["refresh_token"].string)
        let afterReplay = try await refresh(provider, refreshToken, clientID: client.clientID)
        #expect(afterReplay.status == 400, "RFC 6749 §4.1.2: tokens from a replayed code are revoked")
    }

    @Test("Refresh tokens rotate: the old one is invalid_grant after use, and the log counts refreshes")
    func refreshRotation() async throws {
        let provider = try OIDCTestProvider.start()
        let client = try #require(provider.publicClient)
        let (tokens, _) = try await signIn(provider)
        let original = try #require(tokens["refresh_token"].string)
        try await provider.clearLog()

        let renewed = try await refresh(provider, original, clientID: client.clientID)
        #expect(renewed.status == 200)
        let body = try renewed.json()
        let next = try #require(body["refresh_token"].string)
        #expect(next != original)
        #expect(body["access_token"].string != tokens["access_token"].string)
        let idToken = try #require(body["id_token"].string, "OIDC Core §12.2: a new id_token on refresh")
        let (_, claims) = try #require(TestPKCE.unverifiedJWTParts(idToken))
        #expect(claims["sub"] == TestPKCE.unverifiedJWTParts(tokens["id_token"].string ?? "")?.payload["sub"])
        #expect(claims["nonce"].isNull)

        let reuse = try await refresh(provider, original, clientID: client.clientID)
        #expect(reuse.status == 400)
        #expect(try reuse.json()["error"] == "invalid_grant")
        #expect(try await refresh(provider, next, clientID: client.clientID).status == 200)

        let log = try await provider.log()
        #expect(log.count(grantType: "refresh_token") == 3)
        #expect(log.count(endpoint: "token") == 3)
    }

    @Test("16 concurrent refreshes with one refresh token: exactly one succeeds, all 16 are counted")
    func concurrentRefreshes() async throws {
        let provider = try OIDCTestProvider.start()
        let client = try #require(provider.publicClient)
        let (tokens, _) = try await signIn(provider)
        let refreshToken = try #require(tokens["refresh_token"].string)
        try await provider.clearLog()
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<16 {
                group.addTask { try await refresh(provider, refreshToken, clientID: client.clientID).status }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(statuses.filter { $0 == 200 }.count == 1, "\(statuses)")
        #expect(statuses.filter { $0 == 400 }.count == 15)
        #expect(try await provider.log().count(grantType: "refresh_token") == 16)
    }

    @Test("Revocation (RFC 7009) ends the refresh token and its access tokens")
    func revocation() async throws {
        let provider = try OIDCTestProvider.start()
        let client = try #require(provider.publicClient)
        let (tokens, _) = try await signIn(provider)
        let discovery = try await provider.discovery()
        let revoke = try #require(discovery["revocation_endpoint"].string.flatMap(URL.init(string:)))
        let userinfo = try #require(discovery["userinfo_endpoint"].string.flatMap(URL.init(string:)))
        let accessToken = try #require(tokens["access_token"].string)
        let bearer = ["Authorization": "Bearer \(accessToken)"]
        #expect(try await TestHTTP.get(userinfo, headers: bearer).status == 200)

        let answer = try await TestHTTP.postForm(
            revoke, [("token", tokens["refresh_token"].string ?? ""), ("token_type_hint", "refresh_token"), ("client_id", client.clientID)])
        #expect(answer.status == 200)
        #expect(try await refresh(provider, tokens["refresh_token"].string ?? "", clientID: client.clientID).status == 400)
        #expect(try await TestHTTP.get(userinfo, headers: bearer).status == 401)
        // RFC 7009 §2.2: an unknown token is not an error.
        #expect(try await TestHTTP.postForm(revoke, [("token", "no-such-token"), ("client_id", client.clientID)]).status == 200)
    }

    @Test("Device grant (RFC 8628): pending until approved, then tokens; the device code is single-use")
    func deviceGrant() async throws {
        // The default 5 s interval: two quick polls fall inside it however loaded the machine is,
        // and an approved grant is answered at once, so the test never waits for it.
        let provider = try OIDCTestProvider.start()
        let client = try #require(provider.publicClient)
        let discovery = try await provider.discovery()
        let endpoint = try #require(discovery["device_authorization_endpoint"].string.flatMap(URL.init(string:)))
        let device = try await TestHTTP.postForm(endpoint, [("client_id", client.clientID), ("scope", "openid profile offline_access")])
            .json()
        let deviceCode = try #require(device["device_code"].string)
        let userCode = try #require(device["user_code"].string)
        #expect(device["interval"] == 5)
        let poll = [
            ("grant_type", "urn:ietf:params:oauth:grant-type:device_code"), ("device_code", deviceCode), ("client_id", client.clientID),
        ]

        let pending = try await tokenRequest(provider, poll)
        #expect(try pending.json()["error"] == "authorization_pending")
        let tooFast = try await tokenRequest(provider, poll)
        #expect(try tooFast.json()["error"] == "slow_down", "polling faster than the interval must be told to slow down")

        let verification = try #require(device["verification_uri"].string.flatMap(URL.init(string:)))
        let approval = try ScriptedBrowser(user: "grace").approveDevice(verificationURI: verification, userCode: userCode)
        #expect(approval.status == 0, "\(approval.stderr)")
        let granted = try await tokenRequest(provider, poll)
        #expect(granted.status == 200, "\(granted.text)")
        let idToken = try #require(try granted.json()["id_token"].string)
        #expect(TestPKCE.unverifiedJWTParts(idToken)?.payload["preferred_username"] == "grace@example.test")
        let again = try await tokenRequest(provider, poll)
        #expect(again.status == 400)

        // Denied, then expired.
        func start() async throws -> (device: String, user: String) {
            let answer = try await TestHTTP.postForm(endpoint, [("client_id", client.clientID), ("scope", "openid")]).json()
            return (try #require(answer["device_code"].string), try #require(answer["user_code"].string))
        }
        let denied = try await start()
        #expect(try ScriptedBrowser(deny: true).approveDevice(verificationURI: verification, userCode: denied.user).status == 0)
        let deniedPoll = [
            ("grant_type", "urn:ietf:params:oauth:grant-type:device_code"), ("device_code", denied.device), ("client_id", client.clientID),
        ]
        #expect(try await tokenRequest(provider, deniedPoll).json()["error"] == "access_denied")
        try await provider.configure(["device_expires_in": 0])
        let expired = try await start()
        let expiredPoll = [
            ("grant_type", "urn:ietf:params:oauth:grant-type:device_code"), ("device_code", expired.device), ("client_id", client.clientID),
        ]
        #expect(try await tokenRequest(provider, expiredPoll).json()["error"] == "expired_token")
    }

    @Test("A confidential client needs its secret (basic or post); the public client may not use one it lacks")
    func confidentialClient() async throws {
        let provider = try OIDCTestProvider.start()
        let client = try #require(provider.confidentialClient)
        let secret = try #require(client.clientSecret)
        func code() async throws -> String {
            try #require(try await authorize(provider, clientID: client.clientID, pkce: nil).query["code"])
        }
        let base = { (code: String) in [("grant_type", "authorization_code"), ("code", code), ("redirect_uri", redirectURI)] }
        let none = try await tokenRequest(provider, base(try await code()) + [("client_id", client.clientID)])
        #expect(try none.json()["error"] == "invalid_client")
        let wrong = try await tokenRequest(provider, base(try await code()), basicAuth: (client.clientID, secret + "x"))
        #expect(try wrong.json()["error"] == "invalid_client")
        #expect(try await tokenRequest(provider, base(try await code()), basicAuth: (client.clientID, secret)).status == 200)
        let post = try await tokenRequest(provider, base(try await code()) + [("client_id", client.clientID), ("client_secret", secret)])
        #expect(post.status == 200)
    }

    @Test("Token parameters in the URL query are refused")
    func tokenParametersInQueryRefused() async throws {
        let provider = try OIDCTestProvider.start()
        let endpoint = try #require(try await provider.discovery()["token_endpoint"].string)
        let url = try #require(URL(string: endpoint + "?grant_type=refresh_token&refresh_token=x&client_id=y"))
        let response = try await TestHTTP.postForm(url, [])
        #expect(response.status == 400)
        #expect(try response.json()["error"] == "invalid_request")
    }

    @Test("The request log counts per endpoint and never holds a secret; /_test/issued lists them all")
    func logAndIssued() async throws {
        let provider = try OIDCTestProvider.start()
        let (tokens, _) = try await signIn(provider)
        let log = try await provider.log()
        #expect(log.count(endpoint: "authorize") == 2)  // the form, then its submission
        #expect(log.count(endpoint: "token") == 1)
        #expect(log.count(grantType: "authorization_code") == 1)
        let tokenRequest = try #require(log.requests.first { $0["endpoint"] == "token" })
        #expect(tokenRequest["params"].array.contains("code_verifier"))

        let secrets = try await provider.issuedSecrets()
        for key in ["access_token", "refresh_token", "id_token"] {
            #expect(secrets.contains(tokens[key].string ?? "-"), "\(key) missing from /_test/issued")
        }
        let kinds = Set(try await provider.issued()["items"].array.compactMap { $0["kind"].string })
        #expect(kinds.isSuperset(of: ["authorization_code", "access_token", "refresh_token", "id_token", "code_verifier"]))
        let logText = provider.process.logContents()
        #expect(logText.contains("endpoint=token"))
        for secret in secrets { #expect(!logText.contains(secret), "a secret leaked into the provider's log") }
    }

    @Test("Faults: wrong nonce and unknown key in the id_token, no iss on the redirect, token endpoint errors")
    func faults() async throws {
        let provider = try OIDCTestProvider.start()
        try await provider.setFault(.idTokenWrongNonce)
        try await provider.setFault(.idTokenUnknownKey)
        let (tokens, authorization) = try await signIn(provider)
        let (header, payload) = try #require(TestPKCE.unverifiedJWTParts(tokens["id_token"].string ?? ""))
        #expect(payload["nonce"].string != authorization.nonce)
        let jwks = try await TestHTTP.get(provider.process.url("/jwks")).json()
        #expect(!jwks["keys"].array.contains { $0["kid"] == header["kid"] })

        try await provider.setFault(.authorizeNoIssuer)
        let (_, second) = try await signIn(provider)
        #expect(second.query["iss"] == nil)
        #expect(second.query["code"] != nil)

        try await provider.setFault(.error("temporarily_unavailable", description: "try later", status: 503))
        let client = try #require(provider.publicClient)
        let failed = try await refresh(provider, tokens["refresh_token"].string ?? "", clientID: client.clientID)
        #expect(failed.status == 503)
        #expect(try failed.json()["error"] == "temporarily_unavailable")
        // One-shot: the next request is served normally.
        #expect(try await refresh(provider, tokens["refresh_token"].string ?? "", clientID: client.clientID).status == 200)
    }

    @Test("Transport faults: a dropped connection, HTTP 500, a malformed body, a patched discovery document")
    func transportFaults() async throws {
        let provider = try OIDCTestProvider.start()
        let client = try #require(provider.publicClient)
        let (tokens, _) = try await signIn(provider)
        let refreshToken = try #require(tokens["refresh_token"].string)

        try await provider.setFault(.close("token"))
        await #expect(throws: TestHTTPError.self) { try await refresh(provider, refreshToken, clientID: client.clientID) }
        try await provider.setFault(.http500("token"))
        #expect(try await refresh(provider, refreshToken, clientID: client.clientID).status == 500)
        try await provider.setFault(.malformed("token"))
        let malformed = try await refresh(provider, refreshToken, clientID: client.clientID)
        #expect(malformed.status == 200)
        #expect(throws: (any Error).self) { try malformed.json() }
        // None of those consumed the refresh token.
        #expect(try await refresh(provider, refreshToken, clientID: client.clientID).status == 200)

        try await provider.setFault(.patchJSON("discovery", ["issuer": "https://elsewhere.example", "jwks_uri": nil]))
        let patched = try await provider.discovery()
        #expect(patched["issuer"] == "https://elsewhere.example")
        #expect(patched["jwks_uri"].isNull)
        #expect(try await provider.discovery()["issuer"].string == provider.issuer.absoluteString)

        // Lost answer: the refresh is done at the provider, so the old refresh token is spent.
        try await provider.setFault(.closeAfterProcessing(grantType: "refresh_token"))
        let current = try #require(
            try await provider.issued()["items"].array.last { $0["kind"] == "refresh_token" && $0["active"] == true }?["value"].string)
        await #expect(throws: TestHTTPError.self) { try await refresh(provider, current, clientID: client.clientID) }
        #expect(try await refresh(provider, current, clientID: client.clientID).status == 400)

        let log = try await provider.log()
        #expect(log.requests.filter { $0["status"] == "closed" }.count == 2)
    }

    @Test("Key rotation publishes a new kid and signs with it")
    func keyRotation() async throws {
        let provider = try OIDCTestProvider.start()
        let oldKid = try #require(provider.process.ready["kid"].string)
        let newKid = try await provider.rotateKeys()
        #expect(newKid != oldKid)
        let kids = try await TestHTTP.get(provider.process.url("/jwks")).json()["keys"].array.compactMap { $0["kid"].string }
        #expect(kids == [newKid])
        let (tokens, _) = try await signIn(provider)
        #expect(TestPKCE.unverifiedJWTParts(tokens["id_token"].string ?? "")?.header["kid"].string == newKid)
    }

    @Test("A Microsoft-style {tenantid} issuer: template in 'common' discovery, tid in tokens")
    func tenantTemplateIssuer() async throws {
        var options = OIDCTestProvider.Options()
        options.issuerPath = "/{tenantid}/v2.0"
        options.tenantID = "9188040d-6c67-4c5b-b112-36a304b66dad"
        let provider = try OIDCTestProvider.start(options: options)
        #expect(provider.discoveryURL.path == "/common/v2.0/.well-known/openid-configuration")
        let discovery = try await provider.discovery()
        #expect(discovery["issuer"].string == provider.baseURL.absoluteString + "/{tenantid}/v2.0")
        let (tokens, _) = try await signIn(provider)
        let payload = try #require(TestPKCE.unverifiedJWTParts(tokens["id_token"].string ?? "")?.payload)
        #expect(payload["tid"].string == options.tenantID)
        #expect(payload["iss"].string == provider.baseURL.absoluteString + "/\(options.tenantID ?? "")/v2.0")
    }

    @Test("The user can deny: error=access_denied with state and iss")
    func denial() async throws {
        let provider = try OIDCTestProvider.start()
        let client = try #require(provider.publicClient)
        let authorization = try await authorize(provider, clientID: client.clientID, pkce: TestPKCE(), deny: true)
        #expect(authorization.query["error"] == "access_denied")
        #expect(authorization.query["state"] == authorization.state)
        #expect(authorization.query["iss"] == provider.issuer.absoluteString)
    }

    @Test("oidc-provider-mock is as documented: no secret fails, any secret passes, PKCE unchecked, no rotation")
    func mockProviderIsAsDocumented() async throws {
        let mock = try OIDCTestProvider.start(.mock)
        let pkce = TestPKCE()
        func code() async throws -> String {
            try #require(try await authorize(mock, clientID: "any-client", pkce: pkce, scope: "openid profile email").query["code"])
        }
        let noSecret = try await exchange(mock, code: try await code(), clientID: "any-client", verifier: pkce.verifier)
        #expect(noSecret.status == 401)
        #expect(try noSecret.json()["error"] == "invalid_client")

        let anySecret = try await tokenRequest(
            mock,
            [
                ("grant_type", "authorization_code"), ("code", try await code()), ("redirect_uri", redirectURI),
                ("code_verifier", TestPKCE().verifier),
            ],
            basicAuth: ("any-client", "whatever"))
        #expect(anySecret.status == 200, "the mock accepts any secret and a WRONG verifier: \(anySecret.text)")
        let tokens = try anySecret.json()
        let refreshToken = try #require(tokens["refresh_token"].string)
        let renew = {
            try await tokenRequest(
                mock, [("grant_type", "refresh_token"), ("refresh_token", refreshToken)], basicAuth: ("any-client", "x"))
        }
        let first = try await renew()
        #expect(first.status == 200)
        #expect(try first.json()["refresh_token"].isNull, "no rotation")
        #expect(try first.json()["id_token"].isNull, "no id_token on refresh")
        #expect(try await renew().status == 200, "the old refresh token stays valid")
        #expect(try await mock.log().count(grantType: "refresh_token") == 2)
        #expect(try await mock.issuedSecrets().contains(refreshToken))
    }

    @Test("glewlwyd (Debian's C provider) also refuses a wrong code_verifier and a public client without PKCE")
    func glewlwydIsStrict() async throws {
        let provider = try OIDCTestProvider.start(.glewlwyd)
        let client = try #require(provider.publicClient)
        let discovery = try await provider.discovery()
        #expect(discovery["issuer"].string == provider.issuer.absoluteString)
        #expect(discovery["code_challenge_methods_supported"] == ["S256"])

        let pkce = TestPKCE()
        let wrong = try await authorize(provider, clientID: client.clientID, pkce: pkce, scope: "openid")
        let wrongCode = try #require(wrong.query["code"], "\(wrong.query)")
        let refused = try await exchange(provider, code: wrongCode, clientID: client.clientID, verifier: TestPKCE().verifier)
        #expect(refused.status == 403, "glewlwyd answers 403 invalid_code, not 400 invalid_grant")
        #expect(try refused.json()["error"] == "invalid_code")
        #expect(try refused.json()["access_token"].isNull)

        let right = try await authorize(provider, clientID: client.clientID, pkce: pkce, scope: "openid")
        let response = try await exchange(
            provider, code: try #require(right.query["code"]), clientID: client.clientID, verifier: pkce.verifier)
        #expect(response.status == 200, "\(response.text)")
        let payload = try #require(TestPKCE.unverifiedJWTParts(try response.json()["id_token"].string ?? "")?.payload)
        #expect(payload["nonce"].string == right.nonce)
        #expect(right.query["iss"] == nil, "glewlwyd 2.7 sends no RFC 9207 iss")

        let noPKCE = try await authorize(provider, clientID: client.clientID, pkce: nil, scope: "openid")
        #expect(noPKCE.query["error"] == "invalid_request")
        #expect(noPKCE.query["code"] == nil)
    }

    @Test("The $BROWSER wrapper honours its environment knobs")
    func browserWrapper() async throws {
        let provider = try OIDCTestProvider.start()
        let client = try #require(provider.publicClient)
        let directory = try TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let browser = ScriptedBrowser(
            user: "sean", logFile: directory.appendingPathComponent("opened.txt"),
            redirectFile: directory.appendingPathComponent("redirect.txt"))
        let pkce = TestPKCE()
        let fields = [
            ("response_type", "code"), ("client_id", client.clientID), ("redirect_uri", redirectURI), ("scope", "openid profile"),
            ("state", "s-123"), ("nonce", "n-123"), ("code_challenge", pkce.challenge), ("code_challenge_method", "S256"),
        ]
        let url = try #require(URL(string: provider.issuer.absoluteString + "/authorize?" + TestHTTP.formEncode(fields)))
        let result = try await ProcessRunner.run(
            ScriptedBrowser.wrapper, [url.absoluteString], extraEnvironment: browser.environment, timeout: 40)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(!result.stderr.contains("code="), "the browser must not print the authorization code")
        let opened = try String(contentsOf: directory.appendingPathComponent("opened.txt"), encoding: .utf8)
        #expect(opened.trimmingCharacters(in: .whitespacesAndNewlines) == url.absoluteString)
        let redirect = try String(contentsOf: directory.appendingPathComponent("redirect.txt"), encoding: .utf8)
        let query = TestHTTP.queryItems(try #require(URL(string: redirect.trimmingCharacters(in: .whitespacesAndNewlines))))
        #expect(query["state"] == "s-123")
        let code = try #require(query["code"])
        #expect(try await exchange(provider, code: code, clientID: client.clientID, verifier: pkce.verifier).status == 200)
    }

    @Test("A missing Python names ./scripts/test; stop() ends the peer")
    func peerProcessLifecycle() throws {
        let error = #expect(throws: PeerError.self) {
            _ = try PeerProcess(name: "x", script: "graph_server.py", python: URL(fileURLWithPath: "/nonexistent/python"))
        }
        #expect(error?.description.contains("./scripts/test") == true)
        let graph = try GraphFixtureServer.start()
        let pid = graph.process.pid
        #expect(kill(pid, 0) == 0)
        graph.stop()
        #expect(graph.process.exitedCleanly, "the peer must exit by itself when its input closes")
        #expect(kill(pid, 0) == -1)
    }
}

// Nested so that `swift test --filter TestPeerTests` runs these too.
extension TestPeerTests {
    @Suite("Graph fixture server", .serialized)
    struct Graph {
        private func users(_ graph: GraphFixtureServer, _ query: [(String, String)], bearer: String? = "test-token") async throws
            -> TestHTTPResponse
        {
            let url = try #require(URL(string: graph.graphBaseURL.absoluteString + "/users?" + TestHTTP.formEncode(query)))
            return try await TestHTTP.get(url, headers: bearer.map { ["Authorization": "Bearer \($0)"] } ?? [:])
        }

        @Test("The filter parser refuses an unescaped quote and accepts O''Brien")
        func filterEscaping() async throws {
            let graph = try GraphFixtureServer.start()
            let injected = try await users(graph, [("$filter", "startswith(surname,'O'Brien')")])
            #expect(injected.status == 400)
            #expect(try injected.json()["error"]["code"] == "BadRequest")
            #expect(!(try injected.json()["error"]["innerError"]["request-id"].string ?? "").isEmpty)

            let escaped = try await users(graph, [("$filter", "startswith(surname,'O''Brien')"), ("$select", "displayName,mail")])
            #expect(escaped.status == 200)
            let names = try escaped.json()["value"].array.compactMap { $0["displayName"].string }
            #expect(names == ["Seán O'Brien", "Patrick O'Brien-Murphy"])
            #expect(try escaped.json()["value"][0].object.keys.sorted() == ["displayName", "mail"])

            let other = try await users(graph, [("$filter", "startswith(givenName,'a') or 1 eq 1")])
            #expect(other.status == 400, "anything beyond startswith … or … is refused")
            let recorded = try await graph.requests()
            #expect(recorded.last?.filter == "startswith(givenName,'a') or 1 eq 1")
            #expect(recorded.allSatisfy { $0.bearerPresent })
        }

        @Test("Paging follows @odata.nextLink to every match exactly once")
        func paging() async throws {
            let graph = try GraphFixtureServer.start()
            var next: URL? = URL(
                string: graph.graphBaseURL.absoluteString + "/users?"
                    + TestHTTP.formEncode([
                        ("$filter", "startswith(givenName,'a') or startswith(displayName,'山')"), ("$top", "3"), ("$select", "displayName"),
                    ]))
            try #require(next != nil)
            var names: [String] = []
            var pages = 0
            while let url = next, pages < 10 {
                let page = try await TestHTTP.get(url, headers: ["Authorization": "Bearer t"]).json()
                names += page["value"].array.compactMap { $0["displayName"].string }
                next = page["@odata.nextLink"].string.flatMap(URL.init(string:))
                pages += 1
            }
            #expect(pages == 3)
            #expect(names.count == Set(names).count)
            #expect(names.contains("Adele Vance") && names.contains("山田 太郎") && names.contains("Ana Đorđević"))
            #expect(names.count == 8)
        }

        @Test("Errors have Graph's shape: 401 without a bearer, 403 and 429 with Retry-After on demand")
        func errors() async throws {
            let graph = try GraphFixtureServer.start()
            let missing = try await users(graph, [], bearer: nil)
            #expect(missing.status == 401)
            #expect(try missing.json()["error"]["code"] == "InvalidAuthenticationToken")
            #expect(missing.headers["www-authenticate"]?.hasPrefix("Bearer") == true)

            try await graph.failNext(status: 403)
            try await graph.failNext(status: 429, retryAfter: 2)
            let forbidden = try await users(graph, [])
            #expect(forbidden.status == 403)
            #expect(try forbidden.json()["error"]["code"] == "Authorization_RequestDenied")
            let throttled = try await users(graph, [])
            #expect(throttled.status == 429)
            #expect(throttled.headers["retry-after"] == "2")
            #expect(try await users(graph, []).status == 200)
        }

        @Test("With --accept-tokens-from, only the provider's active access tokens pass")
        func acceptsOnlyIssuedTokens() async throws {
            let provider = try OIDCTestProvider.start()
            let graph = try GraphFixtureServer.start(acceptTokensFrom: provider)
            let (tokens, _) = try await signIn(provider)
            #expect(try await users(graph, [], bearer: tokens["access_token"].string).status == 200)
            let forged = try await users(graph, [], bearer: "not-a-token-the-provider-issued")
            #expect(forged.status == 401)
            #expect(try forged.json()["error"]["code"] == "InvalidAuthenticationToken")
        }
    }
}
