import Foundation
import JOSE
import Synchronization
import Testing
import TestSupport
@testable import AuthKit

// The JWKS cache policy against our authlib provider's real jwks_uri, every
// fetch counted in the provider's request log (endpoint `jwks`). Tokens are the provider's own
// id_tokens (from a sign-in and from refreshes after a key rotation), or made-up ones whose
// `kid` no key set holds (the flood).

/// A clock tests move by hand.
final class ManualClock: Sendable {
    private let now = Mutex(Date())
    func read() -> Date { now.withLock { $0 } }
    func advance(_ seconds: TimeInterval) { now.withLock { $0 = $0.addingTimeInterval(seconds) } }
    var function: @Sendable () -> Date { { self.read() } }
}

/// A compact JWS whose header names `kid`; its signature is noise (the key lookup fails first).
private func tokenWithUnknownKid(_ kid: String) -> String {
    func encode(_ text: String) -> String { TestPKCE.base64URL(Data(text.utf8)) }
    let signature = TestPKCE.base64URL(Data((0..<256).map { _ in UInt8.random(in: 0...255) }))
    return encode("{\"alg\":\"RS256\",\"kid\":\"\(kid)\",\"typ\":\"JWT\"}") + "." + encode("{\"iss\":\"x\",\"sub\":\"y\"}") + "."
        + signature
}

private struct Fixture {
    let harness: SignInHarness
    let jwksURI: URL
    let validator: IDTokenValidator

    /// A signed-in harness (which fetched the JWKS once) and a validator for its id_tokens.
    static func make(clock: ManualClock? = nil) async throws -> Fixture {
        let harness = try await SignInHarness.signedIn()
        let client = try #require(harness.provider.publicClient)
        var now: @Sendable () -> Date = { Date() }
        if let clock { now = clock.function }
        let validator = IDTokenValidator(issuer: .exact(harness.provider.issuer.absoluteString), clientID: client.clientID, clock: now)
        return Fixture(harness: harness, jwksURI: harness.provider.issuer.appendingPathComponent("jwks"), validator: validator)
    }

    func jwksFetches() async throws -> Int { try await harness.provider.log().count(endpoint: "jwks") }

    /// A fresh id_token from the provider (a refresh), signed with its current key.
    func freshIDToken() async throws -> String {
        let record = try await harness.record()
        let answer = try await harness.rawRefresh(try #require(record.refreshToken))
        try #require(answer.status == 200, "\(answer.text)")
        let json = try answer.json()
        var updated = record
        updated.refreshToken = json["refresh_token"].string
        try await harness.session.save(updated)
        return try #require(json["id_token"].string)
    }
}

private func expectUnknownKid(_ body: () async throws(AuthKitError) -> ValidatedIDToken, sourceLocation: SourceLocation = #_sourceLocation)
    async
{
    do {
        _ = try await body()
        Issue.record("the token was accepted", sourceLocation: sourceLocation)
    } catch {
        guard case .idToken(.unknownKeyID) = error else {
            Issue.record("expected unknownKeyID, got \(error)", sourceLocation: sourceLocation)
            return
        }
    }
}

@Suite("JWKSCache against a real provider")
struct JWKSCacheTests {
    @Test("fetched on first need, then served from memory")
    func fetchedOnceOnFirstNeed() async throws {
        let fixture = try await Fixture.make()
        let cache = JWKSCache()
        let token = try await fixture.freshIDToken()
        try await fixture.harness.provider.clearLog()
        for _ in 0..<5 {
            _ = try await cache.validate(token, validator: fixture.validator, jwksURI: fixture.jwksURI, nonce: nil)
        }
        #expect(try await fixture.jwksFetches() == 1)
        #expect(await cache.fetchCount == 1)
    }

    @Test("a flood of unknown-kid tokens within the cooldown causes one refetch and no more; after the cooldown, one more")
    func floodWithinCooldown() async throws {
        let clock = ManualClock()
        let fixture = try await Fixture.make(clock: clock)
        let cache = JWKSCache(clock: clock.function)
        _ = try await cache.keys(for: fixture.jwksURI)
        try await fixture.harness.provider.clearLog()
        for index in 0..<50 {
            await expectUnknownKid { () async throws(AuthKitError) in
                try await cache.validate(
                    tokenWithUnknownKid("forged-\(index)"), validator: fixture.validator, jwksURI: fixture.jwksURI, nonce: nil)
            }
        }
        #expect(try await fixture.jwksFetches() == 1, "one refetch for the first miss, none for the other 49")
        clock.advance(29)
        await expectUnknownKid { () async throws(AuthKitError) in
            try await cache.validate(tokenWithUnknownKid("forged-late"), validator: fixture.validator, jwksURI: fixture.jwksURI, nonce: nil)
        }
        #expect(try await fixture.jwksFetches() == 1)
        clock.advance(2)
        await expectUnknownKid { () async throws(AuthKitError) in
            try await cache.validate(
                tokenWithUnknownKid("forged-after"), validator: fixture.validator, jwksURI: fixture.jwksURI, nonce: nil)
        }
        #expect(try await fixture.jwksFetches() == 2, "the cooldown is over: one more refetch")
    }

    @Test("a key rotation is picked up by the first token under the new kid, with one refetch")
    func rotationPickedUp() async throws {
        let fixture = try await Fixture.make()
        let cache = JWKSCache()
        _ = try await cache.validate(try await fixture.freshIDToken(), validator: fixture.validator, jwksURI: fixture.jwksURI, nonce: nil)
        let kid = try await fixture.harness.provider.rotateKeys(keepOld: false)
        let rotated = try await fixture.freshIDToken()
        try await fixture.harness.provider.clearLog()
        let validated = try await cache.validate(rotated, validator: fixture.validator, jwksURI: fixture.jwksURI, nonce: nil)
        #expect(validated.header.keyID == kid)
        #expect(try await fixture.jwksFetches() == 1)
    }

    @Test("a rotation right after a flood of unknown kids is still picked up once the cooldown allows")
    func rotationAfterFlood() async throws {
        let clock = ManualClock()
        let fixture = try await Fixture.make(clock: clock)
        let cache = JWKSCache(clock: clock.function)
        _ = try await cache.keys(for: fixture.jwksURI)
        await expectUnknownKid { () async throws(AuthKitError) in
            try await cache.validate(tokenWithUnknownKid("forged"), validator: fixture.validator, jwksURI: fixture.jwksURI, nonce: nil)
        }
        try await fixture.harness.provider.rotateKeys(keepOld: false)
        let rotated = try await fixture.freshIDToken()
        await expectUnknownKid { () async throws(AuthKitError) in
            try await cache.validate(rotated, validator: fixture.validator, jwksURI: fixture.jwksURI, nonce: nil)
        }
        // Past the cooldown, and never behind the real time the provider minted the token at
        // (on a busy machine the test can outlast the leeway for iat).
        clock.advance(max(31, Date().timeIntervalSince(clock.read())))
        _ = try await cache.validate(rotated, validator: fixture.validator, jwksURI: fixture.jwksURI, nonce: nil)
    }

    @Test("concurrent callers share one in-flight fetch, also the refetch after a rotation")
    func concurrentCallersShareOneFetch() async throws {
        let fixture = try await Fixture.make()
        let cache = JWKSCache()
        let token = try await fixture.freshIDToken()
        try await fixture.harness.provider.clearLog()
        try await fixture.harness.provider.setFault(.delay("jwks", milliseconds: 300))
        let validator = fixture.validator, uri = fixture.jwksURI
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<10 {
                group.addTask { _ = try await cache.validate(token, validator: validator, jwksURI: uri, nonce: nil) }
            }
            try await group.waitForAll()
        }
        #expect(try await fixture.jwksFetches() == 1)

        try await fixture.harness.provider.rotateKeys(keepOld: false)
        let rotated = try await fixture.freshIDToken()
        try await fixture.harness.provider.setFault(.delay("jwks", milliseconds: 300))
        let failures = Transcript()
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<10 {
                group.addTask {
                    do { _ = try await cache.validate(rotated, validator: validator, jwksURI: uri, nonce: nil) } catch {
                        failures.add("\(error)")
                    }
                }
            }
        }
        #expect(failures.all.isEmpty, "every caller gets the rotated key: \(failures.all)")
        #expect(try await fixture.jwksFetches() == 2, "one refetch shared by all ten")
    }

    @Test("a bad signature under a known kid never causes a refetch")
    func noRefetchOnBadSignature() async throws {
        let fixture = try await Fixture.make()
        let cache = JWKSCache()
        let token = try await fixture.freshIDToken()
        _ = try await cache.validate(token, validator: fixture.validator, jwksURI: fixture.jwksURI, nonce: nil)
        try await fixture.harness.provider.clearLog()
        var parts = token.split(separator: ".").map(String.init)
        let signature = try #require(TestPKCE.base64URLDecode(parts[2]))
        parts[2] = TestPKCE.base64URL(Data(signature.reversed()))
        for _ in 0..<5 {
            do {
                _ = try await cache.validate(
                    parts.joined(separator: "."), validator: fixture.validator, jwksURI: fixture.jwksURI, nonce: nil)
                Issue.record("a forged signature was accepted")
            } catch {
                guard case .idToken(.badSignature) = error else {
                    Issue.record("expected badSignature, got \(error)")
                    continue
                }
            }
        }
        #expect(try await fixture.jwksFetches() == 0)
    }

    @Test("when the provider's key set cannot be fetched, the last good set keeps serving for a bounded time")
    func staleSetServedWhileFetchFails() async throws {
        let clock = ManualClock()
        let fixture = try await Fixture.make(clock: clock)
        var policy = JWKSCache.Policy()
        policy.maxAge = .seconds(3600)
        policy.maxStaleAge = .seconds(6 * 3600)
        let cache = JWKSCache(policy: policy, clock: clock.function)
        _ = try await cache.keys(for: fixture.jwksURI)
        try await fixture.harness.provider.clearLog()
        try await fixture.harness.provider.setFault(ProviderFault.http500("jwks").untilCleared)

        // Token validation uses the provider clock's real "now"; keep it valid while time moves.
        var validator = fixture.validator
        validator.leeway = .seconds(48 * 3600)
        let token = try await fixture.freshIDToken()

        clock.advance(2 * 3600)  // older than maxAge: refetch, which fails, so the old set serves
        _ = try await cache.validate(token, validator: validator, jwksURI: fixture.jwksURI, nonce: nil)
        #expect(try await fixture.jwksFetches() == 1)
        _ = try await cache.validate(token, validator: validator, jwksURI: fixture.jwksURI, nonce: nil)
        #expect(try await fixture.jwksFetches() == 1, "a failed refetch is not retried within the cooldown")

        clock.advance(5 * 3600)  // older than maxStaleAge: the failure is reported
        do {
            _ = try await cache.validate(token, validator: validator, jwksURI: fixture.jwksURI, nonce: nil)
            Issue.record("a key set older than maxStaleAge was used")
        } catch {
            guard case .keys(.httpStatus(500, _)) = error else {
                Issue.record("expected the fetch failure, got \(error)")
                return
            }
        }
        try await fixture.harness.provider.clearFaults()
        clock.advance(60)
        _ = try await cache.validate(token, validator: validator, jwksURI: fixture.jwksURI, nonce: nil)
    }

    @Test(
        "malformed key sets and HTTP errors are typed errors",
        arguments: [
            ProviderFault.malformed("jwks", body: "{\"keys\": 5}"),
            ProviderFault.malformed("jwks", body: "not json"),
            ProviderFault.malformed("jwks", body: "{\"keys\": [{\"kty\": \"RSA\", \"kid\": \"x\"}]}"),
            ProviderFault.http500("jwks"),
            ProviderFault.close("jwks"),
        ])
    func malformedKeySets(_ fault: ProviderFault) async throws {
        let fixture = try await Fixture.make()
        let token = try await fixture.freshIDToken()
        try await fixture.harness.provider.setFault(fault.untilCleared)
        let cache = JWKSCache()
        do {
            _ = try await cache.validate(token, validator: fixture.validator, jwksURI: fixture.jwksURI, nonce: nil)
            Issue.record("validated without a usable key set")
        } catch {
            switch error {
            case .keys, .idToken(.unknownKeyID): break
            default: Issue.record("expected a key set error, got \(error)")
            }
            #expect(!error.description.contains(token))
        }
    }
}
