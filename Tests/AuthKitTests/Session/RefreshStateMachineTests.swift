import Foundation
import JOSE
import Testing

@testable import AuthKit

/// The refresh rules as decisions, without a provider, a store or a lock: another process's
/// refresh is used, the keys come before the refresh token is spent, `invalid_grant` is
/// believed only for an unchanged record, another identity keeps nothing, one write follows the
/// checks, a refused id_token keeps the rotated refresh token and hands out nothing, and a write
/// that fails leaves a rotated refresh token pending instead of losing it.
@Suite struct RefreshStateMachineTests {
    typealias Machine = RefreshStateMachine
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    static func jwt(_ claims: [String: Any]) -> String {
        func part(_ data: Data) -> String {
            data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
        }
        let header = part(Data(#"{"alg":"RS256","kid":"k"}"#.utf8))
        let payload = part((try? JSONSerialization.data(withJSONObject: claims, options: [.sortedKeys])) ?? Data())
        return "\(header).\(payload).\(part(Data("sig".utf8)))"
    }

    static func record(generation: Int = 3, accessExpires: Double = 1_800_000_030, refresh: String? = "rt-1") -> TokenRecord {
        TokenRecord(
            version: 1, generation: generation, issuer: "https://idp.example", configuredIssuer: "https://idp.example", subject: "sub-1",
            account: "ada@example.test", name: "Ada", tenantID: nil, clientID: "cli", clientSecret: nil,
            tokenEndpoint: .test("https://idp.example/token"), jwksURI: .test("https://idp.example/jwks"), revocationEndpoint: nil,
            tokenEndpointAuthMethods: ["none"], idTokenAlgorithms: ["RS256"], graphBaseURL: nil, scopes: ["openid", "offline_access"],
            accessToken: "at-old", accessTokenExpiresAt: accessExpires, refreshToken: refresh,
            idToken: jwt(["iss": "https://idp.example", "sub": "sub-1", "iat": 1_700_000_000]), idTokenVerifiedAt: 1_700_000_000,
            additionalTokens: nil, signedInAt: 1_700_000_000, refreshedAt: nil)
    }

    static func response(refresh: String? = "rt-2", idToken: String? = nil) -> TokenResponse {
        TokenResponse(accessToken: "at-new", expiresIn: 3600, refreshToken: refresh, idToken: idToken, scopes: nil, receivedAt: now)
    }

    static func machine(rejected: String? = nil) -> Machine {
        Machine(group: "g", account: "ada@example.test", narrowing: .none, minimumLifetime: .seconds(60), rejected: rejected)
    }

    /// Runs the machine to the refresh request.
    static func toRefresh(_ machine: inout Machine, record: TokenRecord = record()) -> Machine.Effect {
        guard case .fetchKeys = machine.recordRead(record, now: now) else { return .fail(.missingIDToken) }
        return machine.keysFetched(nil)
    }

    @Test func aTokenAnotherProcessRefreshedIsUsedAndARejectedOneIsNot() {
        var machine = Self.machine()
        guard case .finish(let token) = machine.recordRead(Self.record(accessExpires: 1_800_003_600), now: Self.now) else {
            Issue.record("not finished")
            return
        }
        #expect(token.value == "at-old" && !token.refreshed)
        var rejecting = Self.machine(rejected: "at-old")
        guard case .fetchKeys = rejecting.recordRead(Self.record(accessExpires: 1_800_003_600), now: Self.now) else {
            Issue.record("a rejected token was handed out again")
            return
        }
        var signedOut = Self.machine()
        guard case .fail(.notSignedIn) = signedOut.recordRead(nil, now: Self.now) else {
            Issue.record("a missing record is not signed in")
            return
        }
    }

    @Test func theKeysComeBeforeTheRefreshTokenIsSpent() {
        var machine = Self.machine()
        _ = machine.recordRead(Self.record(), now: Self.now)
        guard case .fail(.keys) = machine.keysFetched(.httpStatus(503, url: "https://idp.example/jwks")) else {
            Issue.record("a key-set outage must fail before the refresh")
            return
        }
        var noRefresh = Self.machine()
        _ = noRefresh.recordRead(Self.record(refresh: nil), now: Self.now)
        guard case .fail(.loginRequired) = noRefresh.keysFetched(nil) else {
            Issue.record("no refresh token: a new sign-in is needed")
            return
        }
    }

    @Test func invalidGrantIsBelievedOnlyForAnUnchangedRecord() {
        let invalid = TokenEndpointError.oauth(code: "invalid_grant", description: nil, status: 400)
        var unchanged = Self.machine()
        _ = Self.toRefresh(&unchanged)
        guard case .readRecord = unchanged.refreshed(.failure(invalid), now: Self.now),
            case .fail(.loginRequired) = unchanged.recordRead(Self.record(), now: Self.now)
        else {
            Issue.record("an unchanged record after invalid_grant means a new sign-in")
            return
        }
        var refreshedMeanwhile = Self.machine()
        _ = Self.toRefresh(&refreshedMeanwhile)
        _ = refreshedMeanwhile.refreshed(.failure(invalid), now: Self.now)
        guard
            case .finish(let token) = refreshedMeanwhile.recordRead(Self.record(generation: 4, accessExpires: 1_800_003_600), now: Self.now)
        else {
            Issue.record("another process's fresh token is used")
            return
        }
        #expect(token.value == "at-old")
        var renewed = Self.machine()
        _ = Self.toRefresh(&renewed)
        _ = renewed.refreshed(.failure(invalid), now: Self.now)
        guard case .refresh("rt-9", _) = renewed.recordRead(Self.record(generation: 4, refresh: "rt-9"), now: Self.now) else {
            Issue.record("the renewed refresh token is tried once")
            return
        }
        _ = renewed.refreshed(.failure(invalid), now: Self.now)
        guard case .fail(.loginRequired) = renewed.recordRead(Self.record(generation: 5, refresh: "rt-10"), now: Self.now) else {
            Issue.record("only once")
            return
        }
    }

    @Test func anotherIdentityKeepsNothingAndItsRefreshTokenIsRevoked() {
        var machine = Self.machine()
        _ = Self.toRefresh(&machine)
        let other = Self.jwt(["iss": "https://idp.example", "sub": "someone-else", "iat": 1_800_000_000])
        guard case .revoke("rt-2", _) = machine.refreshed(.success(Self.response(idToken: other)), now: Self.now),
            case .fail(.identityChanged(revokedNewRefreshToken: true)) = machine.revoked(true)
        else {
            Issue.record("another identity: revoke, fail, write nothing")
            return
        }
    }

    @Test func oneWriteAfterTheChecksKeepsARotatedRefreshTokenWhenTheIDTokenIsRefused() {
        var machine = Self.machine()
        _ = Self.toRefresh(&machine)
        let older = Self.jwt(["iss": "https://idp.example", "sub": "sub-1", "iat": 1_600_000_000])
        guard case .validateIDToken(older, _, _) = machine.refreshed(.success(Self.response(idToken: older)), now: Self.now) else {
            Issue.record("the id_token is checked before anything is written")
            return
        }
        let claims = try? JWTClaims(payload: Array(#"{"iss":"https://idp.example","sub":"sub-1","iat":1600000000}"#.utf8))
        guard let claims, case .write(let failed) = machine.idTokenValidated(.success(claims)),
            case .fail(.refreshRejected) = machine.written()
        else {
            Issue.record("an id_token older than the stored one is refused, its problem recorded in the one write")
            return
        }
        #expect(failed.refreshToken == "rt-2" && failed.accessToken == "at-old" && failed.generation == 4)
        #expect(failed.refreshProblem?.contains("iat") == true)
    }

    @Test func aGoodAnswerWithAnIDTokenIsWrittenOnce() {
        var machine = Self.machine()
        _ = Self.toRefresh(&machine)
        let newer = Self.jwt(["iss": "https://idp.example", "sub": "sub-1", "iat": 1_800_000_000])
        guard case .validateIDToken = machine.refreshed(.success(Self.response(idToken: newer)), now: Self.now) else {
            Issue.record("checked first")
            return
        }
        let claims = try? JWTClaims(payload: Array(#"{"iss":"https://idp.example","sub":"sub-1","iat":1800000000}"#.utf8))
        guard let claims, case .write(let stored) = machine.idTokenValidated(.success(claims)) else {
            Issue.record("then one write of the whole answer")
            return
        }
        #expect(stored.refreshToken == "rt-2" && stored.accessToken == "at-new" && stored.idToken == newer && stored.refreshProblem == nil)
        guard case .finish(let token) = machine.written() else {
            Issue.record("then handed out")
            return
        }
        #expect(token.value == "at-new")
    }

    /// The store refuses the write of a rotated refresh token: the record goes to the pending
    /// place, naming the generation it replaces, and the error says whether it is kept.
    @Test func aFailedWriteOfARotatedRefreshTokenLeavesItPending() {
        for kept in [true, false] {
            var machine = Self.machine()
            _ = Self.toRefresh(&machine)
            guard case .write(let record) = machine.refreshed(.success(Self.response()), now: Self.now),
                case .keepPending(let pending, replacing: 3) = machine.written(.timedOut(operation: "save the item", seconds: 5))
            else {
                Issue.record("a rotated refresh token whose write failed is kept pending")
                return
            }
            #expect(pending.refreshToken == "rt-2" && pending.generation == 4 && pending.accessToken == record.accessToken)
            guard case .fail(.rotationNotSaved(.timedOut, keptPending: kept)) = machine.pendingKept(kept) else {
                Issue.record("then the failure, saying whether it waits")
                return
            }
        }
        // Not rotated: the store still holds the live refresh token; nothing is pending.
        var machine = Self.machine()
        _ = Self.toRefresh(&machine)
        guard case .write = machine.refreshed(.success(Self.response(refresh: "rt-1")), now: Self.now),
            case .fail(.storage(.locked)) = machine.written(.locked(collection: "Login"))
        else {
            Issue.record("a failed write without rotation is the store's error")
            return
        }
    }

    /// A pending record applies only to the record it was derived from.
    @Test func aPendingRecordAppliesOnlyToTheRecordItReplaces() {
        var pending = Self.record(generation: 4, refresh: "rt-2")
        #expect(Machine.pending(pending, replacing: "3", appliesTo: Self.record(generation: 3)))
        #expect(!Machine.pending(pending, replacing: "3", appliesTo: Self.record(generation: 4)), "another refresh did save")
        #expect(!Machine.pending(pending, replacing: "2", appliesTo: Self.record(generation: 3)))
        pending.subject = "someone-else"
        #expect(!Machine.pending(pending, replacing: "3", appliesTo: Self.record(generation: 3)), "a new sign-in replaced it")
    }

    @Test func aGoodAnswerIsStoredWholeAndHandedOut() {
        var machine = Self.machine()
        _ = Self.toRefresh(&machine)
        guard case .write(let stored) = machine.refreshed(.success(Self.response(refresh: "rt-1")), now: Self.now) else {
            Issue.record("no rotation: one write of the whole answer")
            return
        }
        #expect(stored.accessToken == "at-new" && stored.refreshToken == "rt-1" && stored.refreshProblem == nil && stored.generation == 4)
        guard case .finish(let token) = machine.written() else {
            Issue.record("then handed out")
            return
        }
        #expect(token.value == "at-new" && token.refreshed)
        guard case .fail = machine.written() else {
            Issue.record("an event out of turn is an error, never a token")
            return
        }
    }
}
