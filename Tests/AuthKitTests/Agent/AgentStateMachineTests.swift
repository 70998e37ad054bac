import Testing
@testable import AuthKit

@Suite("AgentStateMachine")
struct AgentStateMachineTests {
    typealias Machine = AgentStateMachine

    static let now = Machine.Now(wall: 1_000_000, monotonic: 50)

    static func line(_ text: String) -> [UInt8] { Array(text.utf8) }

    static func token(_ value: String = "at-1", expiresIn: Int64 = 3600, now: Machine.Now = now) -> Machine.Token {
        Machine.Token(value: value, expiresAt: Int64(now.wall) + expiresIn, account: "ada", scopes: ["openid"], refreshed: false)
    }

    static let key = Machine.Key(storage: .secretService, group: "g", account: nil, scopes: [], idToken: false)
    static let request = #"{"v":1,"op":"token","group":"g","storage":"secret-service","min_ttl":60}"#

    @Test("the first request fetches; the answer goes to it and is held for the next")
    func fetchThenHold() {
        var machine = Machine(policy: .owner, pid: 7)
        #expect(machine.receiveActions(Self.line(Self.request), from: 1, now: Self.now) == [.fetch(Self.key, minTTL: 60)])
        let answered = machine.fetchedActions(Self.key, .success(Self.token()), now: Self.now)
        #expect(answered == [.reply(1, Machine.answer(Self.token()))])
        var later = Self.now
        later.monotonic += 0.5
        #expect(machine.receiveActions(Self.line(Self.request), from: 2, now: later) == [.reply(2, Machine.answer(Self.token()))])
    }

    @Test("many waiting connections share one fetch")
    func singleFetch() {
        var machine = Machine(policy: .owner, pid: 7)
        var fetches = 0
        for connection in 1...1000 {
            for action in machine.receiveActions(Self.line(Self.request), from: connection, now: Self.now) {
                if case .fetch = action { fetches += 1 }
            }
        }
        #expect(fetches == 1)
        let replies = machine.fetchedActions(Self.key, .success(Self.token()), now: Self.now)
        #expect(replies.count == 1000)
        #expect(replies.allSatisfy { if case .reply(_, let response) = $0 { response.token == "at-1" } else { false } })
    }

    @Test("what is held is read again from the store after the recheck interval (at once for the kernel keyring)")
    func recheck() {
        var machine = Machine(policy: .owner, recheckInterval: 1, pid: 7)
        _ = machine.receiveActions(Self.line(Self.request), from: 1, now: Self.now)
        _ = machine.fetchedActions(Self.key, .success(Self.token()), now: Self.now)
        var later = Self.now
        later.monotonic += 1.01
        #expect(machine.receiveActions(Self.line(Self.request), from: 2, now: later) == [.fetch(Self.key, minTTL: 60)])

        let kernel = #"{"v":1,"op":"token","group":"g","storage":"kernel-keyring"}"#
        var kernelKey = Self.key
        kernelKey.storage = .kernelKeyring
        _ = machine.receiveActions(Self.line(kernel), from: 3, now: Self.now)
        _ = machine.fetchedActions(kernelKey, .success(Self.token()), now: Self.now)
        #expect(machine.receiveActions(Self.line(kernel), from: 4, now: Self.now) == [.fetch(kernelKey, minTTL: 60)])
    }

    @Test("a token that does not live min_ttl more is fetched again; a waiter asking more than the fetch gets a second fetch")
    func minimumLifetime() {
        var machine = Machine(policy: .owner, pid: 7)
        _ = machine.receiveActions(Self.line(Self.request), from: 1, now: Self.now)
        _ = machine.fetchedActions(Self.key, .success(Self.token(expiresIn: 100)), now: Self.now)
        let longer = #"{"v":1,"op":"token","group":"g","storage":"secret-service","min_ttl":600}"#
        #expect(machine.receiveActions(Self.line(longer), from: 2, now: Self.now) == [.fetch(Self.key, minTTL: 600)])

        var fresh = Machine(policy: .owner, pid: 7)
        _ = fresh.receiveActions(Self.line(Self.request), from: 1, now: Self.now)
        #expect(fresh.receiveActions(Self.line(longer), from: 2, now: Self.now).isEmpty)
        let actions = fresh.fetchedActions(Self.key, .success(Self.token(expiresIn: 100)), now: Self.now)
        #expect(actions == [.reply(1, Machine.answer(Self.token(expiresIn: 100))), .fetch(Self.key, minTTL: 600)])
    }

    @Test("forget and rejected drop what is held; a failure reaches every waiter and nothing stays held")
    func forgetting() {
        var machine = Machine(policy: .owner, pid: 7)
        _ = machine.receiveActions(Self.line(Self.request), from: 1, now: Self.now)
        _ = machine.fetchedActions(Self.key, .success(Self.token()), now: Self.now)
        #expect(machine.heldCount == 1)
        _ = machine.receiveActions(Self.line(#"{"v":1,"op":"forget","group":"g"}"#), from: 2, now: Self.now)
        #expect(machine.heldCount == 0)

        _ = machine.receiveActions(Self.line(Self.request), from: 3, now: Self.now)
        _ = machine.fetchedActions(Self.key, .success(Self.token()), now: Self.now)
        let rejected = machine.receiveActions(
            Self.line(#"{"v":1,"op":"rejected","group":"g","storage":"secret-service","token":"at-1"}"#), from: 4, now: Self.now)
        #expect(rejected == [.markRejected(group: "g", storage: .secretService, token: "at-1", then: 4)])
        #expect(machine.heldCount == 0)

        _ = machine.receiveActions(Self.line(Self.request), from: 5, now: Self.now)
        _ = machine.receiveActions(Self.line(Self.request), from: 6, now: Self.now)
        let failure = AgentFailure(code: .notSignedIn, message: "nobody is signed in in the group g", category: .login, group: "g")
        #expect(
            machine.fetchedActions(Self.key, .failure(failure), now: Self.now) == [
                .reply(5, .failure(failure)), .reply(6, .failure(failure)),
            ])
        #expect(machine.heldCount == 0)
    }

    @Test(
        "malformed, oversized, unknown-version and incomplete requests get a typed answer, never a crash",
        arguments: [
            "", "not json", "[1]", #"{"v":1}"#, #"{"v":2,"op":"token","group":"g"}"#, #"{"v":1,"op":"refresh_token","group":"g"}"#,
            #"{"v":1,"op":"token","group":"g","min_ttl":-1}"#, #"{"v":1,"op":"token","group":"g","min_ttl":99999999}"#,
            #"{"v":1,"op":"token","group":"g","storage":"floppy"}"#, #"{"v":1,"op":"token"}"#, #"{"v":1,"op":"token","group":"g","v":1}"#,
            "(a line one byte over the limit)",
        ])
    func badRequests(_ text: String) {
        var machine = Machine(policy: .owner, pid: 7)
        let line = text.hasPrefix("(a line") ? [UInt8](repeating: 0x78, count: AgentMessage.maximumRequestBytes + 1) : Self.line(text)
        let actions = machine.receiveActions(line, from: 1, now: Self.now)
        guard case .reply(1, let response) = actions.first else {
            Issue.record("no answer: \(actions)")
            return
        }
        #expect(!response.ok)
        #expect(response.error?.code == .badRequest)
        #expect(response.token == nil)
    }

    @Test("a fetch that began before a forget or a rejection is not kept nor handed out: it is fetched again")
    func changedWhileFetching() {
        var machine = Machine(policy: .owner, pid: 7)
        #expect(machine.receiveActions(Self.line(Self.request), from: 1, now: Self.now) == [.fetch(Self.key, minTTL: 60)])
        _ = machine.receiveActions(Self.line(#"{"v":1,"op":"forget","group":"g"}"#), from: 2, now: Self.now)
        #expect(machine.fetchedActions(Self.key, .success(Self.token("old")), now: Self.now) == [.fetch(Self.key, minTTL: 60)])
        #expect(machine.heldCount == 0)
        #expect(
            machine.fetchedActions(Self.key, .success(Self.token("new")), now: Self.now) == [.reply(1, Machine.answer(Self.token("new")))])

        _ = machine.receiveActions(Self.line(Self.request), from: 3, now: Self.now)  // held: answered at once
        var later = Self.now
        later.monotonic += 2
        #expect(machine.receiveActions(Self.line(Self.request), from: 4, now: later) == [.fetch(Self.key, minTTL: 60)])
        _ = machine.receiveActions(
            Self.line(#"{"v":1,"op":"rejected","group":"g","storage":"secret-service","token":"new"}"#), from: 5, now: later)
        #expect(machine.fetchedActions(Self.key, .success(Self.token("new")), now: later) == [.fetch(Self.key, minTTL: 60)])
    }

    @Test("hello says who answers, whether the socket is restricted, and which groups a restricted one serves")
    func hello() {
        var machine = Machine(
            policy: .restricted(groups: ["h": .kernelKeyring, "g": .secretService], extraScopes: [], idTokens: false), pid: 42)
        guard case .reply(_, let response) = machine.receiveActions(Self.line(#"{"v":1,"op":"hello"}"#), from: 1, now: Self.now).first
        else {
            Issue.record("no answer")
            return
        }
        #expect(response.ok && response.pid == 42 && response.restricted == true && response.agent == AuthKitVersion.current)
        #expect(response.groups == ["g", "h"])
        var owner = Machine(policy: .owner, pid: 42)
        guard case .reply(_, let own) = owner.receive(Self.line(#"{"v":1,"op":"hello"}"#), from: 1, now: Self.now).first else {
            Issue.record("no answer")
            return
        }
        #expect(own.restricted == false && own.groups == nil, "the agent's own socket lists no groups")
        guard
            case .reply(_, let refusal) = machine.receiveActions(Self.line(#"{"v":1,"op":"token","group":"x"}"#), from: 2, now: Self.now)
                .first
        else {
            Issue.record("no answer")
            return
        }
        #expect(
            refusal.error?.code == .refused && refusal.error?.hint == "it serves g, h: name one with `--group GROUP` (or AUTHKIT_GROUP)")
    }
}

@Suite("AgentPolicy")
struct AgentPolicyTests {
    typealias Machine = AgentStateMachine
    static let policy = AgentPolicy.restricted(groups: ["g": .kernelKeyring], extraScopes: ["api://x/.default"], idTokens: false)

    func code(_ request: String, policy: AgentPolicy = Self.policy) -> String? {
        var machine = Machine(policy: policy, pid: 1)
        let actions = machine.receiveActions(Array(request.utf8), from: 1, now: AgentStateMachineTests.now)
        if case .reply(_, let response) = actions.first { return response.error?.code.rawValue ?? "ok" }
        if case .fetch = actions.first { return "fetch" }
        if case .markRejected = actions.first { return "mark" }
        return nil
    }

    @Test("a forwarded socket serves the listed group from the store chosen when it opened, whatever store the request names")
    func servesListedGroup() {
        var machine = Machine(policy: Self.policy, pid: 1)
        let actions = machine.receiveActions(
            Array(#"{"v":1,"op":"token","group":"g","storage":"secret-service"}"#.utf8), from: 1, now: AgentStateMachineTests.now)
        #expect(
            actions == [.fetch(Machine.Key(storage: .kernelKeyring, group: "g", account: nil, scopes: [], idToken: false), minTTL: 60)])
        #expect(code(#"{"v":1,"op":"token","group":"g","scopes":["api://x/.default"]}"#) == "fetch")
    }

    @Test(
        "it refuses other groups, other scopes, id_tokens without --id-token, forget and stop",
        arguments: [
            #"{"v":1,"op":"token","group":"other"}"#, #"{"v":1,"op":"token","group":"g","scopes":["Mail.Read"]}"#,
            #"{"v":1,"op":"id_token","group":"g"}"#,
            #"{"v":1,"op":"forget","group":"g"}"#, #"{"v":1,"op":"stop"}"#,
        ])
    func refuses(_ request: String) {
        #expect(code(request) == "refused")
    }

    @Test("--confirm: a connection's first token waits for the terminal's yes; a no refuses and closes it")
    func confirmation() {
        var policy = Self.policy
        policy.confirm = true
        var machine = Machine(policy: policy, pid: 1)
        let now = AgentStateMachineTests.now
        machine.opened(1, asker: .test(42))
        let request = Array(#"{"v":1,"op":"token","group":"g"}"#.utf8)
        #expect(
            machine.receiveActions(request, from: 1, now: now) == [
                .confirm(
                    1, group: "g", idToken: false, asker: "git (pid 42) ← bash",
                    what: "an access token of g for the group's current account")
            ])
        let key = Machine.Key(storage: .kernelKeyring, group: "g", account: nil, scopes: [], idToken: false)
        #expect(machine.confirmedActions(1, allowed: true, now: now) == [.fetch(key, minTTL: 60)])
        _ = machine.fetchedActions(key, .success(AgentStateMachineTests.token()), now: now)
        // Allowed once: the connection's next request needs no question (it is read again: the
        // kernel keyring is read on every request).
        #expect(machine.receiveActions(request, from: 1, now: now) == [.fetch(key, minTTL: 60)])

        machine.opened(2, asker: .test(43))
        #expect(
            machine.receiveActions(request, from: 2, now: now) == [
                .confirm(
                    2, group: "g", idToken: false, asker: "git (pid 43) ← bash",
                    what: "an access token of g for the group's current account")
            ])
        let refused = machine.confirmedActions(2, allowed: false, now: now)
        #expect(refused.count == 2 && refused.last == .close(2))
        if case .reply(2, let response) = refused.first { #expect(response.error?.code == .refused) } else { Issue.record("no refusal") }
        #expect(machine.confirmedActions(2, allowed: true, now: now).isEmpty, "nothing waits any more")
    }

    @Test("a yes covers the group and the kind of token it named: another group or an id_token asks again")
    func confirmationCoversWhatItNamed() {
        var policy = AgentPolicy.restricted(groups: ["g": .kernelKeyring, "h": .kernelKeyring], extraScopes: [], idTokens: true)
        policy.confirm = true
        var machine = Machine(policy: policy, pid: 1)
        let now = AgentStateMachineTests.now
        machine.opened(1, asker: .test(42))
        let token = Array(#"{"v":1,"op":"token","group":"g"}"#.utf8)
        #expect(
            machine.receiveActions(token, from: 1, now: now) == [
                .confirm(
                    1, group: "g", idToken: false, asker: "git (pid 42) ← bash",
                    what: "an access token of g for the group's current account")
            ])
        let key = Machine.Key(storage: .kernelKeyring, group: "g", account: nil, scopes: [], idToken: false)
        #expect(machine.confirmedActions(1, allowed: true, now: now) == [.fetch(key, minTTL: 60)])
        _ = machine.fetchedActions(key, .success(AgentStateMachineTests.token()), now: now)
        let idToken = Array(#"{"v":1,"op":"id_token","group":"g"}"#.utf8)
        #expect(
            machine.receiveActions(idToken, from: 1, now: now) == [
                .confirm(
                    1, group: "g", idToken: true, asker: "git (pid 42) ← bash", what: "an id_token of g for the group's current account")
            ])
        #expect(machine.confirmedActions(1, allowed: false, now: now).last == .close(1))
        machine.closed(1)
        machine.opened(2, asker: .test(43))
        #expect(
            machine.receiveActions(token, from: 2, now: now).first
                == .confirm(
                    2, group: "g", idToken: false, asker: "git (pid 43) ← bash",
                    what: "an access token of g for the group's current account"))
        _ = machine.confirmedActions(2, allowed: true, now: now)
        let other = Array(#"{"v":1,"op":"token","group":"h"}"#.utf8)
        #expect(
            machine.receiveActions(other, from: 2, now: now) == [
                .confirm(
                    2, group: "h", idToken: false, asker: "git (pid 43) ← bash",
                    what: "an access token of h for the group's current account")
            ])
    }

    @Test("a forward's client gets min_ttl capped, and its rejections reach the store once a minute at most")
    func forwardCannotRefreshAtWill() {
        var machine = Machine(policy: Self.policy, pid: 1)
        var now = AgentStateMachineTests.now
        let key = Machine.Key(storage: .kernelKeyring, group: "g", account: nil, scopes: [], idToken: false)
        let long = Array(#"{"v":1,"op":"token","group":"g","min_ttl":86400}"#.utf8)
        #expect(machine.receiveActions(long, from: 1, now: now) == [.fetch(key, minTTL: Machine.maximumForwardedMinTTL)])
        _ = machine.fetchedActions(key, .success(AgentStateMachineTests.token()), now: now)
        let rejected = Array(#"{"v":1,"op":"rejected","group":"g","token":"at-1"}"#.utf8)
        #expect(
            machine.receiveActions(rejected, from: 1, now: now) == [
                .markRejected(group: "g", storage: .kernelKeyring, token: "at-1", then: 1)
            ])
        var marked = 1
        for _ in 0..<20 {
            now.monotonic += 1
            if case .markRejected = machine.receiveActions(rejected, from: 1, now: now).first { marked += 1 }
        }
        #expect(marked == 1, "twenty rejections in twenty seconds send the machine to the provider once")
        now.monotonic += Machine.forwardedRejectionInterval
        #expect(
            machine.receiveActions(rejected, from: 1, now: now).first
                == .markRejected(group: "g", storage: .kernelKeyring, token: "at-1", then: 1))
        // The owner's own socket is not limited.
        var owner = Machine(policy: .owner, pid: 1)
        let ownRejection = Array(#"{"v":1,"op":"rejected","group":"g","storage":"kernel-keyring","token":"at-1"}"#.utf8)
        #expect((0..<3).allSatisfy { _ in owner.receiveActions(ownRejection, from: 1, now: now).first?.isMark == true })
    }

    /// A provider whose tokens live 300 s (Keycloak's default) and a forward's client that asks
    /// `min_ttl` 300 (the cap): without a limit every request would be a refresh. After one, the
    /// forward serves any unexpired token of the group for a minute; an expired one is fetched.
    @Test("a forward's min_ttl sends the machine to the provider once a minute at most, whatever the token lifetime")
    func forwardRefreshesAreRateLimited() {
        var machine = Machine(policy: Self.policy, pid: 1)
        var now = AgentStateMachineTests.now
        let key = Machine.Key(storage: .kernelKeyring, group: "g", account: nil, scopes: [], idToken: false)
        let request = Array(#"{"v":1,"op":"token","group":"g","min_ttl":300}"#.utf8)
        #expect(machine.receiveActions(request, from: 1, now: now) == [.fetch(key, minTTL: 300)])
        var token = AgentStateMachineTests.token(expiresIn: 300, now: now)
        token.refreshed = true
        _ = machine.fetchedActions(key, .success(token), now: now)
        var fetches = 1
        for _ in 0..<10 {
            now.monotonic += 5
            now.wall += 5
            for action in machine.receiveActions(request, from: 1, now: now) {
                if case .fetch(_, let minTTL) = action {
                    fetches += 1
                    #expect(minTTL == 0, "within the minute, any unexpired token serves")
                    _ = machine.fetchedActions(key, .success(AgentStateMachineTests.token(expiresIn: 300 - 5, now: now)), now: now)
                }
            }
        }
        #expect(fetches <= 11, "reads of the store")
        // A minute after the refresh, min_ttl counts again.
        now.monotonic += Machine.forwardedRefreshInterval
        now.wall += Machine.forwardedRefreshInterval
        #expect(machine.receiveActions(request, from: 1, now: now) == [.fetch(key, minTTL: 300)])
    }

    /// A proof is asked for as a token is: only for a served group, only once the forward is
    /// open, for the forward's account; the agent signs it (the key never crosses the socket)
    /// and the audit log records it.
    @Test("a proof request is admitted like a token request and signed by the shell")
    func proofsAreAdmittedLikeTokens() throws {
        let ath = "fUHyO2r2Z3DZ53EsNrWBb0xWXoaNy59IiKCAqksmQEo"
        let line = #"{"v":1,"op":"proof","group":"g","method":"GET","url":"https://api.example/me?x=1","ath":"\#(ath)"}"#
        #expect(code(#"{"v":1,"op":"proof","group":"other","method":"GET","url":"https://api.example/me","ath":"\#(ath)"}"#) == "refused")
        #expect(code(#"{"v":1,"op":"proof","group":"g","method":"GET","url":"ftp://api.example/me","ath":"\#(ath)"}"#) == "bad_request")
        #expect(code(#"{"v":1,"op":"proof","group":"g","method":"GET","url":"https://api.example/me"}"#) == "bad_request")
        var policy = Self.policy
        policy.accounts = ["g": "ada"]
        var machine = Machine(policy: policy, pid: 1)
        let now = AgentStateMachineTests.now
        guard case .sign(1, let request, .kernelKeyring) = try #require(machine.receiveActions(Array(line.utf8), from: 1, now: now).first)
        else {
            Issue.record("no sign action")
            return
        }
        #expect(request.token.account == "ada" && request.proof.target == "https://api.example/me" && request.proof.accessTokenHash == ath)
        let signed = machine.signed(1, .success("h.p.s"), request: request, now: now)
        var answer = AgentResponse(ok: true)
        answer.proof = "h.p.s"
        #expect(signed.first == .reply(1, answer))
        #expect(machine.log.events(after: 0, group: "g", limit: 10).last?.token == "dpop_proof")
        // Not before the forward is open.
        policy.openKey = "k"
        var closed = Machine(policy: policy, pid: 1)
        guard case .reply(1, let early) = closed.receiveActions(Array(line.utf8), from: 1, now: now).first else {
            Issue.record("no answer")
            return
        }
        #expect(early.error?.code == .notOpen)
    }

    @Test("a narrowing forward fills in its resources and scopes, refuses wider ones, and serves nothing after its time")
    func narrowingForward() {
        var policy = Self.policy
        policy.resources = ["https://api.example/"]
        policy.narrowScopes = ["read"]
        policy.servesUntil = AgentStateMachineTests.now.monotonic + 600
        var machine = Machine(policy: policy, pid: 1)
        var now = AgentStateMachineTests.now
        let key = Machine.Key(
            storage: .kernelKeyring, group: "g", account: nil, scopes: ["read"], resources: ["https://api.example/"], idToken: false)
        #expect(machine.receiveActions(Array(#"{"v":1,"op":"token","group":"g"}"#.utf8), from: 1, now: now) == [.fetch(key, minTTL: 60)])
        #expect(code(#"{"v":1,"op":"token","group":"g","resources":["https://other.example/"]}"#, policy: policy) == "refused")
        #expect(code(#"{"v":1,"op":"token","group":"g","scopes":["write"]}"#, policy: policy) == "refused")
        #expect(code(#"{"v":1,"op":"token","group":"g","resources":["not a uri"]}"#, policy: policy) == "bad_request")
        now.monotonic += 601
        guard case .reply(2, let late) = machine.receiveActions(Array(#"{"v":1,"op":"token","group":"g"}"#.utf8), from: 2, now: now).first
        else {
            Issue.record("no answer")
            return
        }
        #expect(late.error?.code == .refused && late.error?.message.contains("time is over") == true)
    }

    /// `authkit ssh`'s forward serves nothing until its far side opens it with the session's key:
    /// before, a token is `not_open`; the right key closes every connection made before it
    /// (another account's, in the moment before the far side's check) and then serves; a wrong
    /// key ends the forward.
    @Test("a forward that waits for its far side serves nothing before the open, and ends on a wrong key")
    func forwardOpensOnlyWithItsKey() {
        var policy = Self.policy
        policy.openKey = "k3y"
        var machine = Machine(policy: policy, pid: 1)
        let now = AgentStateMachineTests.now
        for connection in 1...3 { machine.opened(connection, asker: .test(Int32(40 + connection))) }
        let token = Array(#"{"v":1,"op":"token","group":"g"}"#.utf8)
        guard case .reply(1, let early) = machine.receiveActions(token, from: 1, now: now).first else {
            Issue.record("no answer")
            return
        }
        #expect(early.error?.code == .notOpen)
        #expect(
            machine.receiveActions(Array(#"{"v":1,"op":"open","key":"k3y"}"#.utf8), from: 3, now: now) == [
                .reply(3, AgentResponse(ok: true)), .close(1), .close(2),
            ])
        machine.closed(1)
        machine.closed(2)
        let key = Machine.Key(storage: .kernelKeyring, group: "g", account: nil, scopes: [], idToken: false)
        #expect(machine.receiveActions(token, from: 3, now: now) == [.fetch(key, minTTL: 60)])

        var wrong = Machine(policy: policy, pid: 1)
        let actions = wrong.receiveActions(Array(#"{"v":1,"op":"open","key":"guess"}"#.utf8), from: 1, now: now)
        #expect(actions.last == .stop && actions.contains { if case .warn = $0 { return true } else { return false } }, "\(actions)")
        // A socket without a key (agent forward, the agent's own) has nothing to open.
        var plain = Machine(policy: Self.policy, pid: 1)
        #expect(
            plain.receiveActions(Array(#"{"v":1,"op":"open","key":"x"}"#.utf8), from: 1, now: now) == [.reply(1, AgentResponse(ok: true))])
    }

    @Test("requests naming ever-new groups keep the machine's memory bounded, on a forward and on the owner's socket")
    func boundedState() {
        var forward = Machine(policy: Self.policy, pid: 1)
        var owner = Machine(policy: .owner, pid: 1)
        let now = AgentStateMachineTests.now
        for index in 0..<5000 {
            let rejected = Array(#"{"v":1,"op":"rejected","group":"g\#(index)","storage":"kernel-keyring","token":"t"}"#.utf8)
            #expect(forward.receiveActions(rejected, from: 1, now: now).first?.isMark != true)
            _ = owner.receiveActions(rejected, from: 1, now: now)
            _ = owner.receiveActions(Array(#"{"v":1,"op":"forget","group":"g\#(index)"}"#.utf8), from: 1, now: now)
        }
        #expect(forward.footprint == 0 && owner.footprint == 0, "forward \(forward.footprint), owner \(owner.footprint)")
        // Waiting connections that go away leave nothing behind.
        for connection in 1...100 {
            owner.opened(connection, asker: .test(Int32(connection)))
            _ = owner.receiveActions(
                Array(#"{"v":1,"op":"token","group":"g\#(connection)","storage":"kernel-keyring"}"#.utf8), from: connection, now: now)
            owner.closed(connection)
        }
        #expect(owner.footprint == 100 * 2, "only the fetches under way (and their generation) remain: \(owner.footprint)")
    }

    @Test("a forward opened with --account serves that account only")
    func fixedAccount() {
        var policy = Self.policy
        policy.accounts = ["g": "ada@example.test"]
        #expect(code(#"{"v":1,"op":"token","group":"g","account":"grace@example.test"}"#, policy: policy) == "refused")
        var machine = Machine(policy: policy, pid: 1)
        let actions = machine.receiveActions(Array(#"{"v":1,"op":"token","group":"g"}"#.utf8), from: 1, now: AgentStateMachineTests.now)
        #expect(
            actions == [
                .fetch(
                    Machine.Key(storage: .kernelKeyring, group: "g", account: "ada@example.test", scopes: [], idToken: false), minTTL: 60)
            ])
    }

    @Test("the owner's socket serves any group and stops on request")
    func owner() {
        #expect(code(#"{"v":1,"op":"token","group":"other","storage":"plain-file"}"#, policy: .owner) == "fetch")
        var machine = Machine(policy: .owner, pid: 1)
        #expect(machine.receiveActions(Array(#"{"v":1,"op":"stop"}"#.utf8), from: 1, now: AgentStateMachineTests.now).last == .stop)
    }
}

extension AgentStateMachine.Action {
    fileprivate var isMark: Bool {
        if case .markRejected = self { return true }
        return false
    }
}

extension AgentStateMachine {
    /// The protocol's actions, without the audit events (their own tests check those).
    mutating func receiveActions(_ line: some Collection<UInt8>, from connection: Connection, now: Now) -> [Action] {
        receive(line, from: connection, now: now).filter { !$0.isJournal }
    }

    mutating func fetchedActions(_ key: Key, _ result: Result<Token, AgentFailure>, now: Now) -> [Action] {
        fetched(key, result, now: now).filter { !$0.isJournal }
    }

    mutating func confirmedActions(_ connection: Connection, allowed: Bool, now: Now) -> [Action] {
        confirmed(connection, allowed: allowed, now: now).filter { !$0.isJournal }
    }
}

extension AgentStateMachine.Action {
    var isJournal: Bool {
        if case .journal = self { return true }
        return false
    }
}

extension AgentAsker {
    /// `git (pid PID)`, run from a shell.
    static func test(_ pid: Int32, session: String? = "1@1") -> AgentAsker {
        AgentAsker(
            chain: [
                Process(pid: pid, name: "git", executable: "/usr/bin/git", commandLine: "git fetch"),
                Process(pid: 1, name: "bash", executable: "/usr/bin/bash", commandLine: "-bash"),
            ], session: session)
    }
}
