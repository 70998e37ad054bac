import Foundation
import JOSE
import SecretStore
import Testing
import TestSupport
@testable import AuthKit

/// DPoP-bound sign-ins (RFC 9449) with pushed authorization requests (RFC 9126) against our
/// provider, which checks every proof (typ, alg, jwk, jti replay, htm, htu without query, iat,
/// ath, nonce) and binds what it issues to the key's thumbprint.
@Suite struct DPoPSignInTests {
    static let options = OIDCTestProvider.Options.dpopAndPAR

    static func userinfo(_ harness: SignInHarness) async throws -> URL {
        let text = try await harness.provider.discovery()["userinfo_endpoint"].string ?? ""
        return try #require(URL(string: text))
    }

    /// The issued items of `kind` that are still active.
    static func issued(_ harness: SignInHarness, _ kind: String) async throws -> [PeerJSON] {
        try await harness.provider.issued()["items"].array.filter { $0["kind"].string == kind && $0["active"].bool != false }
    }

    @Test func aSignInBindsItsTokensToAKeyKeptApartFromTheRefreshToken() async throws {
        let harness = try await SignInHarness.start(options: Self.options)
        _ = try await harness.run(harness.flow(try harness.profile())).get()
        let record = try #require(try await harness.records().first)
        #expect(record.tokenType == "DPoP")
        #expect(record.dpopKeyPlace == "store")
        let thumbprint = try #require(record.dpopThumbprint)

        // The provider bound the access and refresh tokens to that key.
        for kind in ["access_token", "refresh_token"] {
            let items = try await Self.issued(harness, kind)
            #expect(
                items.count == 1 && items.allSatisfy { $0["bound"].bool == true && $0["jkt"].string == thumbprint }, "\(kind): \(items)")
        }
        // The authorization went through a pushed request naming the key; the browser saw only
        // client_id and request_uri.
        let log = try await harness.provider.log()
        let authorize = try #require(log.requests.first { $0["endpoint"] == "authorize" })
        #expect(Set(authorize["params"].array.compactMap(\.string)) == ["client_id", "request_uri"])
        let pushed = try await harness.provider.process.control("GET", "/_test/par")["requests"].array
        #expect(pushed.count == 1 && pushed.first?["dpop_jkt"].string == thumbprint, "\(pushed)")

        // The key is an item of its own, beside the record, and the record holds no key.
        let items = try await harness.store.items(matching: ItemQuery(group: harness.session.group), loadSecrets: true)
        #expect(Set(items.map(\.key.kind)) == ["tokens", "dpop-key \(thumbprint)"])
        let recordItem = try #require(items.first { $0.key.kind == "tokens" })
        let keyItem = try #require(items.first { $0.key.kind == "dpop-key \(thumbprint)" })
        #expect(!String(decoding: try recordItem.validatedSecret(), as: UTF8.self).contains("\"d\""))
        let keyText = String(decoding: try keyItem.validatedSecret(), as: UTF8.self)
        #expect(keyText.contains("\"d\"") && !keyText.contains(record.refreshToken ?? "-"))

        // Every proof the provider saw was accepted, after one nonce round trip at /token (the
        // client pre-flight's, which primes the nonce for the code exchange).
        let proofs = try await harness.provider.dpopLog()
        #expect(proofs["counts"]["refused"].int == 1 && proofs["counts"]["use_dpop_nonce"].int == 1, "\(proofs)")
        #expect(proofs["proofs"].array.last?["endpoint"].string == "token" && proofs["proofs"].array.last?["accepted"].bool == true)
        try await harness.expectNoSecretsLeaked()
    }

    @Test func requestsRefreshesAndSignOutAllCarryProofs() async throws {
        let harness = try await SignInHarness.start(options: Self.options)
        _ = try await harness.run(harness.flow(try harness.profile())).get()
        let userinfo = try await Self.userinfo(harness)

        // A resource request: DPoP scheme, proof with ath and the server's nonce.
        let response = try await harness.session.send(HTTPRequest(url: userinfo))
        #expect(response.status == 200, "\(String(decoding: response.body, as: UTF8.self))")
        #expect(String(decoding: response.body, as: UTF8.self).contains("ada@example.test"))

        // The same token as Bearer is refused: stealing it alone gets nothing.
        let token = try await harness.session.validAccessToken()
        #expect(token.tokenType == "DPoP")
        var bearer = HTTPRequest(url: userinfo)
        bearer.headers.add("Authorization", "Bearer \(token.value)")
        #expect(try await CurlHTTPTransport().send(bearer).status == 401)

        // A refresh from another session (another tool) reads the key from the store.
        try await harness.provider.clearLog()
        let second = try harness.secondSession()
        let refreshed = try await second.validAccessToken(minimumLifetime: .seconds(86_400 * 300))
        #expect(refreshed.refreshed && refreshed.tokenType == "DPoP")
        #expect(try await second.send(HTTPRequest(url: userinfo)).status == 200)

        // Sign-out revokes with a proof, and the key goes with the sign-in.
        let outcomes = try await harness.session.signOut()
        #expect(outcomes.first?.revocation == .revoked)
        #expect(try await harness.itemCount() == 0)
        let proofs = try await harness.provider.dpopLog()
        #expect(proofs["counts"]["refused"].int == proofs["counts"]["use_dpop_nonce"].int, "\(proofs)")
        #expect(proofs["counts"]["replays_refused"].int == 0)
        try await harness.expectNoSecretsLeaked()
    }

    @Test func aStolenRefreshTokenIsUselessWithoutTheKey() async throws {
        let harness = try await SignInHarness.start(options: Self.options)
        _ = try await harness.run(harness.flow(try harness.profile())).get()
        let record = try #require(try await harness.records().first)
        let refreshToken = try #require(record.refreshToken)
        let client = try #require(harness.provider.publicClient)
        var endpoint = TokenEndpointClient(endpoint: record.tokenEndpoint.url, client: OAuthClient(clientID: client.clientID))
        // Without a proof.
        await #expect(throws: TokenEndpointError.self) { _ = try await endpoint.refresh(refreshToken) }
        // With another key's proof.
        endpoint.dpop = try DPoPKey.make(.off).0
        do {
            _ = try await endpoint.refresh(refreshToken)
            Issue.record("another key's proof was taken")
        } catch {
            guard case .oauth(let code, _, _) = error else { throw error }
            #expect(code == "invalid_dpop_proof")
        }
        // The sign-in itself still works.
        #expect(try await harness.session.validAccessToken(minimumLifetime: .seconds(86_400 * 300)).refreshed)
    }

    @Test func aProviderThatAnswersBearerToAProofIsRefusedAndNothingIsKept() async throws {
        let harness = try await SignInHarness.start(options: Self.options)
        try await harness.provider.setFault(.dpopTokenTypeBearer)
        let error = try expectFailure(await harness.run(harness.flow(try harness.profile())))
        guard case .tokenEndpoint(.tokenTypeMismatch(asked: "DPoP", answered: "Bearer")) = error else {
            Issue.record("\(error)")
            return
        }
        #expect(try await harness.itemCount() == 0)
        #expect(error.description.contains("--dpop never"))
    }

    @Test func aDPoPAnswerNobodyAskedForIsRefused() async throws {
        let harness = try await SignInHarness.start(options: Self.options)
        try await harness.provider.setFault(.dpopTokenTypeDPoPUnasked)
        var profile = try harness.profile()
        profile.dpop = .never
        let error = try expectFailure(await harness.run(harness.flow(profile)))
        guard case .tokenEndpoint(.tokenTypeMismatch(asked: "Bearer", answered: "DPoP")) = error else {
            Issue.record("\(error)")
            return
        }
        #expect(try await harness.itemCount() == 0)
    }

    @Test func neverSignsInWithBearerTokens() async throws {
        let harness = try await SignInHarness.start(options: Self.options)
        var profile = try harness.profile()
        profile.dpop = .never
        _ = try await harness.run(harness.flow(profile)).get()
        let record = try #require(try await harness.records().first)
        #expect(record.tokenType == nil && record.dpopThumbprint == nil)
        #expect(
            try await harness.store.items(matching: ItemQuery(group: harness.session.group), loadSecrets: false).map(\.key.kind) == [
                "tokens"
            ])
        let response = try await harness.session.send(HTTPRequest(url: try await Self.userinfo(harness)))
        #expect(response.status == 200)
        #expect(try await harness.provider.dpopLog()["counts"]["received"].int == 0)
    }

    @Test func aRotatedNonceIsFollowedOnceAndARefusedProofIsSaid() async throws {
        let harness = try await SignInHarness.start(options: Self.options)
        _ = try await harness.run(harness.flow(try harness.profile())).get()
        let userinfo = try await Self.userinfo(harness)
        try await harness.provider.setFault(.dpopNonceRotate)
        #expect(try await harness.session.send(HTTPRequest(url: userinfo)).status == 200)
        try await harness.provider.setFault(.dpopRefuseProof("token"))
        await #expect {
            _ = try await harness.session.validAccessToken(minimumLifetime: .seconds(86_400 * 300))
        } throws: { error in
            "\(error)".contains("invalid_dpop_proof") && "\(error)".contains("clock")
        }
        // Refused, not lost: the next request refreshes.
        #expect(try await harness.session.validAccessToken(minimumLifetime: .seconds(86_400 * 300)).refreshed)
    }

    @Test func aStoredKeyThatIsNotTheSignInsIsRefusedAndLeftInPlace() async throws {
        let harness = try await SignInHarness.start(options: Self.options)
        _ = try await harness.run(harness.flow(try harness.profile())).get()
        let items = try await harness.store.items(matching: ItemQuery(group: harness.session.group), loadSecrets: false)
        let keyItem = try #require(items.first { $0.key.kind.hasPrefix("dpop-key ") })
        let other = try DPoPKey.make(.off).0
        _ = try await harness.store.save(try other.stored(), for: keyItem.key, label: "swapped")
        let fresh = try harness.secondSession()
        await #expect {
            _ = try await fresh.validAccessToken(minimumLifetime: .seconds(86_400 * 300))
        } throws: { error in
            guard case AuthKitError.dpop(.keyMismatch) = error else { return false }
            return true
        }
        #expect(try await harness.itemCount() == 2)
        // Garbage in the key item: a typed error too, nothing deleted.
        _ = try await harness.store.save(
            Array("{\"version\":1,\"jkt\":\"x\",\"jwk\":{\"kty\":\"EC\"}}".utf8), for: keyItem.key, label: "garbage")
        await #expect(throws: AuthKitError.self) {
            _ = try await harness.secondSession().validAccessToken(minimumLifetime: .seconds(86_400 * 300))
        }
        #expect(try await harness.itemCount() == 2)
    }

    @Test(.enabled(if: SoftwareTPM.isAvailable, "swtpm and tpm2-openssl are not installed"))
    func withATPMTheKeyNeverLeavesIt() async throws {
        let tpm = try await SoftwareTPM()
        let harness = try await SignInHarness.start(options: Self.options)
        var environment = harness.environment
        environment["AUTHKIT_TPM"] = tpm.tcti
        let session = try SharedSession(group: harness.group, store: harness.store, environment: environment)
        let flow = SignInFlow(profile: try harness.profile(), session: session, browser: harness.browser())
        let result = try await harness.run(flow).get()
        #expect(result.account.tokenType == "DPoP" && result.account.dpopKey == "tpm")
        let keyItem = try #require(
            try await harness.store.items(matching: ItemQuery(group: session.group), loadSecrets: true).first {
                $0.key.kind.hasPrefix("dpop-key ")
            })
        let stored = String(decoding: try keyItem.validatedSecret(), as: UTF8.self)
        #expect(stored.contains("TSS2 PRIVATE KEY") && !stored.contains("\"d\""))
        // Another session (another process would do the same) loads the blob into the TPM.
        let other = try SharedSession(group: harness.group, store: harness.store, environment: environment)
        #expect(try await other.send(HTTPRequest(url: try await Self.userinfo(harness))).status == 200)
        #expect(try await other.validAccessToken(minimumLifetime: .seconds(86_400 * 300)).refreshed)
        try await harness.expectNoSecretsLeaked()
        await tpm.stop()
    }

    @Test func aTPMThatWasNamedButCannotBeUsedStopsTheSignIn() async throws {
        let harness = try await SignInHarness.start(options: Self.options)
        var environment = harness.environment
        environment["AUTHKIT_TPM"] = "device:/nonexistent/tpmrm0"
        let session = try SharedSession(group: harness.group, store: harness.store, environment: environment)
        let error = try expectFailure(
            await harness.run(SignInFlow(profile: try harness.profile(), session: session, browser: harness.browser())))
        #expect(error.description.contains("there is no TPM"), "\(error)")
        #expect(try await harness.itemCount() == 0)
    }

    @Test func aNewSignInsKeyNeverReplacesTheStoredOneBeforeItsRecord() async throws {
        let harness = try await SignInHarness.start(options: Self.options)
        _ = try await harness.run(harness.flow(try harness.profile())).get()
        let first = try #require(try await harness.records().first?.dpopThumbprint)
        _ = try await harness.run(harness.flow(try harness.profile())).get()
        let second = try #require(try await harness.records().first?.dpopThumbprint)
        #expect(first != second)
        // One key per thumbprint: the new one was stored beside the old, which went only once
        // the new record was in place.
        let kinds = try await harness.store.items(matching: ItemQuery(group: harness.session.group), loadSecrets: false).map(\.key.kind)
        #expect(Set(kinds) == ["tokens", "dpop-key \(second)"], "\(kinds)")
        #expect(try await harness.secondSession().send(HTTPRequest(url: try await Self.userinfo(harness))).status == 200)
    }

    @Test func aRefreshAnsweredWithTheWrongTokenTypeKeepsTheRotatedRefreshToken() async throws {
        let harness = try await SignInHarness.start(options: Self.options)
        _ = try await harness.run(harness.flow(try harness.profile())).get()
        let before = try #require(try await harness.records().first?.refreshToken)
        try await harness.provider.setFault(.dpopTokenTypeBearer)
        await #expect {
            _ = try await harness.session.validAccessToken(minimumLifetime: .seconds(86_400 * 300))
        } throws: { error in
            guard case AuthKitError.tokenEndpoint(.tokenTypeMismatch(asked: "DPoP", answered: "Bearer")) = error else { return false }
            return true
        }
        // The provider rotated the refresh token in that answer: it was kept, so the next
        // refresh (the provider refuses a reused one) works.
        let after = try #require(try await harness.records().first?.refreshToken)
        #expect(after != before)
        #expect(try await harness.session.validAccessToken(minimumLifetime: .seconds(86_400 * 300)).refreshed)
    }

    @Test func noProofIsMadeForTheProvidersTokenOrRevocationEndpoint() async throws {
        let harness = try await SignInHarness.start(options: Self.options)
        _ = try await harness.run(harness.flow(try harness.profile())).get()
        let record = try #require(try await harness.records().first)
        // Nor for the same endpoint written another way, which the server normalises to it.
        let token = record.tokenEndpoint.url.absoluteString
        let base = String(token[..<(token.lastIndex(of: "/") ?? token.endIndex)])
        let spellings = ["/%74oken", "/./token", "/x/../token", "/%2e/token", "/token/", "//token", "/token;x", "/TOKEN"]
        let disguised = spellings.compactMap { URL(string: base + $0) }
        #expect(disguised.count == spellings.count)
        for url in [record.tokenEndpoint.url, try #require(record.revocationEndpoint?.url)] + disguised {
            await #expect(throws: AuthKitError.self, "\(url)") {
                _ = try await ResourceRequest.localProof(try DPoPProof(method: "POST", url: url), session: harness.session, account: nil)
            }
        }
        _ = try await ResourceRequest.localProof(
            try DPoPProof(method: "GET", url: try await Self.userinfo(harness)), session: harness.session, account: nil)
    }

    /// A Graph search with a bound sign-in sends the token as RFC 9449 §7 says (a bound token
    /// sent as Bearer is refused by any server that knows DPoP): the DPoP scheme, and a proof of
    /// the sign-in's key for this GET of this URL with the token's hash.
    @Test func aGraphSearchSendsABoundTokenWithAProof() async throws {
        let harness = try await SignInHarness.start(options: Self.options)
        _ = try await harness.run(harness.flow(try harness.profile())).get()
        let record = try #require(try await harness.records().first)
        let graph = ScriptedTransport([.success(HTTPResponse(status: 200, headers: HTTPHeaders(), body: Array(#"{"value":[]}"#.utf8)))])
        let base = try #require(URL(string: "https://graph.example.test/v1.0"))
        let client = GraphClient(session: harness.session, baseURL: base, transport: graph)
        #expect(try await client.searchUsers("ada").isEmpty)
        let sent = try #require(graph.requests.first)
        let token = try await harness.session.validAccessToken()
        #expect(sent.headers["Authorization"] == "DPoP \(token.value)")
        let proof = try #require(sent.headers["DPoP"])
        let (_, claims) = try DPoPProofTests.parts(proof)
        #expect(claims["htm"] == .string("GET") && claims["htu"] == .string("https://graph.example.test/v1.0/users"))
        #expect(claims["ath"] == .string(try DPoPProof.hash(of: token.value)))
        let key = try DPoPProofTests.headerKey(proof)
        #expect(try key.thumbprint() == record.dpopThumbprint)
        _ = try JWSVerifier(allowedAlgorithms: [.es256]).verify(proof, keys: JWKSet(keys: [key]))
    }

    @Test func aStoredKeyNamingAnotherTPMIsRefused() async throws {
        let harness = try await SignInHarness.start(options: Self.options)
        _ = try await harness.run(harness.flow(try harness.profile())).get()
        let items = try await harness.store.items(matching: ItemQuery(group: harness.session.group), loadSecrets: false)
        let keyItem = try #require(items.first { $0.key.kind.hasPrefix("dpop-key ") })
        let jkt = String(keyItem.key.kind.dropFirst("dpop-key ".count))
        let planted = #"{"version":1,"jkt":"\#(jkt)","tpm":{"tcti":"device:/dev/watchdog","blob":"x"}}"#
        _ = try await harness.store.save(Array(planted.utf8), for: keyItem.key, label: "planted")
        await #expect {
            _ = try await harness.secondSession().validAccessToken(minimumLifetime: .seconds(86_400 * 300))
        } throws: { error in
            "\(error)".contains("a TPM authkit was not told to use")
        }
        #expect(try await harness.itemCount() == 2)
    }
}
