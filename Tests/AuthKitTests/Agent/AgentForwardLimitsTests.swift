import Foundation
import JOSE
import Testing
@testable import AuthKit

/// What a forward's consumer cannot get, whatever it sends and whatever the agent or provider
/// behind it does, without sockets: no resource's token from a forward opened without
/// `--resource`, nothing wider than its `--scope`/`--resource` (checked on the token itself), no
/// proof for another API, nothing after `--for` (a yes or a fetch that came late included), no
/// refresh per request after a failure; and a client that asked an older agent for a narrow
/// token does not take the sign-in's own for it.
@Suite struct AgentForwardLimitsTests {
    typealias Machine = AgentStateMachine
    static let now = AgentStateMachineTests.now
    static let plain = AgentPolicy.restricted(groups: ["g": .kernelKeyring], extraScopes: [], idTokens: false)

    static var narrow: AgentPolicy {
        var policy = plain
        policy.resources = ["https://api.example/"]
        policy.narrowScopes = ["read"]
        return policy
    }
    static let narrowKey = Machine.Key(
        storage: .kernelKeyring, group: "g", account: nil, scopes: ["read"], resources: ["https://api.example/"], idToken: false)
    static let ask = Array(#"{"v":1,"op":"token","group":"g"}"#.utf8)

    static func token(scopes: [String], resources: [String], value: String = "opaque-token") -> Machine.Token {
        var token = Machine.Token(value: value, expiresAt: Int64(now.wall) + 3600, account: "ada", scopes: scopes, refreshed: true)
        token.resources = resources
        return token
    }

    /// An unsigned JWT whose claims are `claims` (the forward reads them, it does not trust them).
    static func jwt(_ claims: String) -> String {
        Base64URL.encode(Array(#"{"alg":"RS256","typ":"at+jwt"}"#.utf8)) + "." + Base64URL.encode(Array(claims.utf8)) + ".c2lnbmF0dXJl"
    }

    static func refusal(_ actions: [Machine.Action], to connection: Machine.Connection = 1) -> String? {
        for case .reply(connection, let response) in actions where response.error?.code == .refused { return response.error?.message }
        return nil
    }

    @Test func aForwardWithoutResourceServesNoResourcesToken() {
        var machine = Machine(policy: Self.plain, pid: 1)
        let actions = machine.receiveActions(
            Array(#"{"v":1,"op":"token","group":"g","resources":["https://other.example/"]}"#.utf8), from: 1, now: Self.now)
        #expect(Self.refusal(actions)?.contains("--resource") == true, "\(actions)")
        #expect(!actions.contains { if case .fetch = $0 { return true } else { return false } })
        // --allow-resource: the resources a client may name (a [credential] mapping's); its own
        // token still served, any other resource refused.
        var allowing = Self.plain
        allowing.allowedResources = ["https://git.example/"]
        var machine2 = Machine(policy: allowing, pid: 1)
        let key = Machine.Key(
            storage: .kernelKeyring, group: "g", account: nil, scopes: [], resources: ["https://git.example/"], idToken: false)
        #expect(
            machine2.receiveActions(
                Array(#"{"v":1,"op":"token","group":"g","resources":["https://git.example/"]}"#.utf8), from: 1, now: Self.now)
                == [.fetch(key, minTTL: 60)])
        let other = machine2.receiveActions(
            Array(#"{"v":1,"op":"token","group":"g","resources":["https://other.example/"]}"#.utf8), from: 2, now: Self.now)
        #expect(Self.refusal(other, to: 2) != nil, "\(other)")
        let own = Machine.Key(storage: .kernelKeyring, group: "g", account: nil, scopes: [], idToken: false)
        #expect(machine2.receiveActions(Self.ask, from: 3, now: Self.now) == [.fetch(own, minTTL: 60)])
    }

    @Test func aTokenWiderThanTheForwardIsRefusedWhateverAnsweredIt() {
        let cases: [(Machine.Token, String)] = [
            // An older agent, or a provider that does not narrow: the sign-in's scopes.
            (Self.token(scopes: ["read", "write"], resources: ["https://api.example/"]), "write"),
            // The answer says "read"; the token itself says more.
            (Self.token(scopes: ["read"], resources: ["https://api.example/"], value: Self.jwt(#"{"scope":"read admin"}"#)), "admin"),
            // Not shown to be for the resource at all, or for another audience too.
            (Self.token(scopes: ["read"], resources: []), "not shown"),
            (
                Self.token(
                    scopes: ["read"], resources: ["https://api.example/"],
                    value: Self.jwt(#"{"aud":["https://api.example/","https://other.example/"]}"#)), "another audience"
            ),
        ]
        for (token, said) in cases {
            var machine = Machine(policy: Self.narrow, pid: 1)
            #expect(machine.receiveActions(Self.ask, from: 1, now: Self.now) == [.fetch(Self.narrowKey, minTTL: 60)])
            let answer = machine.fetchedActions(Self.narrowKey, .success(token), now: Self.now)
            #expect(Self.refusal(answer)?.contains(said) == true, "\(said): \(answer)")
        }
        // An id_token (a forward opened with --id-token) is no access token: not checked so.
        var withIDTokens = Self.narrow
        withIDTokens.idTokens = true
        var identity = Machine(policy: withIDTokens, pid: 1)
        let idKey = Machine.Key(storage: .kernelKeyring, group: "g", account: nil, scopes: [], idToken: true)
        #expect(
            identity.receiveActions(Array(#"{"v":1,"op":"id_token","group":"g"}"#.utf8), from: 1, now: Self.now) == [
                .fetch(idKey, minTTL: 60)
            ])
        let idToken = Self.token(scopes: [], resources: [])
        #expect(identity.fetchedActions(idKey, .success(idToken), now: Self.now) == [.reply(1, Machine.answer(idToken))])
        // As narrow as the forward: served.
        var machine = Machine(policy: Self.narrow, pid: 1)
        _ = machine.receiveActions(Self.ask, from: 1, now: Self.now)
        let good = Self.token(
            scopes: ["read"], resources: ["https://api.example/"], value: Self.jwt(#"{"scope":"read","aud":"https://api.example/"}"#))
        #expect(machine.fetchedActions(Self.narrowKey, .success(good), now: Self.now) == [.reply(1, Machine.answer(good))])
    }

    @Test func aFailedFetchIsAnsweredAgainWithoutAskingForAWhile() {
        var machine = Machine(policy: Self.narrow, pid: 1)
        _ = machine.receiveActions(Self.ask, from: 1, now: Self.now)
        _ = machine.fetchedActions(Self.narrowKey, .failure(.refused("the provider does not narrow")), now: Self.now)
        var now = Self.now
        now.monotonic += 5
        let again = machine.receiveActions(Self.ask, from: 2, now: now)
        #expect(Self.refusal(again, to: 2) == "the provider does not narrow", "\(again)")
        now.monotonic += AgentFailedFetches.interval
        #expect(machine.receiveActions(Self.ask, from: 3, now: now) == [.fetch(Self.narrowKey, minTTL: 60)])
        // The owner's socket asks every time (its client sees every failure as it is).
        var owner = Machine(policy: .owner, pid: 1)
        let key = Machine.Key(storage: .kernelKeyring, group: "g", account: nil, scopes: [], idToken: false)
        let request = Array(#"{"v":1,"op":"token","group":"g","storage":"kernel-keyring"}"#.utf8)
        _ = owner.receiveActions(request, from: 1, now: Self.now)
        _ = owner.fetchedActions(key, .failure(.refused("no")), now: Self.now)
        #expect(owner.receiveActions(request, from: 2, now: Self.now) == [.fetch(key, minTTL: 60)])
    }

    @Test func nothingIsServedAfterTheForwardsTimeEvenToWhoAskedBefore() {
        var policy = Self.plain
        policy.servesUntil = Self.now.monotonic + 60
        policy.confirm = true
        var machine = Machine(policy: policy, pid: 1)
        machine.opened(1, asker: .test(41))
        let asked = machine.receiveActions(Self.ask, from: 1, now: Self.now)
        #expect(asked.contains { if case .confirm = $0 { return true } else { return false } }, "\(asked)")
        var late = Self.now
        late.monotonic += 61
        let yes = machine.confirmedActions(1, allowed: true, now: late)
        #expect(Self.refusal(yes)?.contains("time is over") == true, "\(yes)")

        // A fetch that began in time and ended after it.
        policy.confirm = false
        var fetching = Machine(policy: policy, pid: 1)
        let key = Machine.Key(storage: .kernelKeyring, group: "g", account: nil, scopes: [], idToken: false)
        #expect(fetching.receiveActions(Self.ask, from: 1, now: Self.now) == [.fetch(key, minTTL: 60)])
        let answer = fetching.fetchedActions(key, .success(AgentStateMachineTests.token()), now: late)
        #expect(Self.refusal(answer)?.contains("time is over") == true, "\(answer)")
    }

    @Test func aForwardForSomeResourcesSignsProofsForThemOnly() {
        func proof(_ url: String) -> [UInt8] {
            Array(#"{"v":1,"op":"proof","group":"g","method":"GET","url":"\#(url)","ath":"\#(String(repeating: "A", count: 43))"}"#.utf8)
        }
        for (url, allowed) in [
            ("https://api.example/", true), ("https://api.example/v1/items?x=1", true), ("https://api.example.evil/", false),
            ("https://other.example/", false), ("https://api.example/../admin", false), ("https://api.example/v1/%2e%2e/admin", false),
        ] {
            var machine = Machine(policy: Self.narrow, pid: 1)
            let actions = machine.receiveActions(proof(url), from: 1, now: Self.now)
            let signs = actions.contains { if case .sign = $0 { return true } else { return false } }
            #expect(signs == allowed, "\(url): \(actions)")
        }
    }
}
