import Testing
@testable import AuthKit

/// The receiver's rules without a socket: requests are numbered, connections named.
@Suite("CallbackStateMachine")
struct CallbackStateMachineTests {
    typealias Machine = CallbackStateMachine<String, Int>

    static let expectation = CallbackExpectation(state: "good-state", issuer: "https://idp.example", issuerRequired: false)

    func machine(_ change: (inout LoopbackRedirectReceiver.Limits) -> Void = { _ in }) -> Machine {
        var limits = LoopbackRedirectReceiver.Limits()
        change(&limits)
        return Machine(path: "/callback", limits: limits)
    }

    func waiting(_ machine: inout Machine) {
        guard case .waiting(let effects) = machine.wait(for: Self.expectation) else {
            Issue.record("the wait did not start")
            return
        }
        #expect(effects.replies.isEmpty && effects.outcome == nil)
    }

    func replies(_ effects: Machine.Effects) -> [Int: CallbackReply] {
        Dictionary(effects.replies.map { ($0.0, $0.1) }, uniquingKeysWith: { first, _ in first })
    }

    @Test func theRightCallbackEndsTheWaitWithARedirectAndItsResultPageOnlyThen() throws {
        var machine = machine()
        waiting(&machine)
        #expect(machine.receive(target: "/authkit/signed-in", responder: 0).replies.first?.1.status == .notFound, "not before it happened")

        let effects = machine.receive(target: "/callback?code=the-code&state=good-state", responder: 1)
        guard case .success(let grant) = effects.outcome else {
            Issue.record("the wait did not end with the grant: \(String(describing: effects.outcome))")
            return
        }
        #expect(grant.code == "the-code")
        let reply = try #require(replies(effects)[1])
        #expect(
            reply.status == .seeOther && reply.location == "/authkit/signed-in", "a redirect, never a page with the code in the address bar"
        )
        #expect(!effects.closeListener && machine.awaitsResultPage, "the listener stays for the result page")

        #expect(
            machine.receive(target: "/authkit/failed", responder: 2).replies.first?.1.status == .notFound, "only the outcome that happened")
        let page = machine.receive(target: "/authkit/signed-in", responder: 3)
        #expect(page.replies.first?.1.status == .ok && page.resultPageFetched && !machine.awaitsResultPage)

        let again = machine.receive(target: "/callback?code=another&state=good-state", responder: 4)
        #expect(again.outcome == nil && replies(again)[4]?.location == "/authkit/already-used")
        #expect(replies(machine.receive(target: "/callback", responder: 5))[5]?.status == .gone)
    }

    /// A page on another site whose name it made resolve to 127.0.0.1 (DNS rebinding) names
    /// that site in `Host`: answered "not found", judged never — even with the right `state`.
    @Test func onlyTheReceiversOwnNamesInHostAreServed() {
        var machine = machine()
        machine.accept(port: 8400)
        waiting(&machine)
        for host: [String]? in [["rebound.example:8400"], ["127.0.0.1:9999"], ["127.0.0.1:8400", "x:8400"], [], nil, ["localhost"]] {
            let effects = machine.receive(target: "/callback?code=c&state=good-state", host: host, responder: 1)
            #expect(effects.outcome == nil && replies(effects)[1]?.status == .notFound, "\(String(describing: host))")
        }
        let effects = machine.receive(target: "/callback?code=c&state=good-state", host: ["LocalHost:8400"], responder: 2)
        #expect(effects.outcome != nil, "localhost, [::1] and 127.0.0.1 name the receiver, in any case")
        var standard = self.machine()
        standard.accept(port: 80)
        waiting(&standard)
        #expect(standard.receive(target: "/callback?code=c&state=good-state", host: ["127.0.0.1"], responder: 3).outcome != nil)
    }

    static let start = Machine.Start(
        path: "/authkit-start/link", cookieName: "authkit-1234", cookieValue: "browser-cookie",
        location: "https://idp.example/authorize?state=good-state", maxAge: 300)

    /// In browser mode the browser gets a one-time link, never the authorization URL (a command
    /// line any local user can read): it sets a cookie and leads on; a callback without that
    /// cookie — a neighbour who read the state — is refused and the wait goes on.
    @Test func aStartLinkSetsTheCookieOnceAndOnlyItsBrowsersCallbackEndsTheWait() throws {
        var machine = machine()
        machine.prepare(Self.start)
        waiting(&machine)
        let opened = try #require(replies(machine.receive(target: "/authkit-start/link", responder: 1))[1])
        #expect(opened.status == .seeOther && opened.location == Self.start.location)
        #expect(opened.cookie == "authkit-1234=browser-cookie; Path=/; HttpOnly; SameSite=Lax; Max-Age=300")

        let neighbour = machine.receive(target: "/callback?code=theirs&state=good-state", responder: 2)
        #expect(neighbour.outcome == nil && neighbour.refusals == [.otherBrowser])
        let wrong = machine.receive(target: "/callback?code=theirs&state=good-state", cookies: ["authkit-1234=guess"], responder: 3)
        #expect(wrong.outcome == nil)

        let effects = machine.receive(
            target: "/callback?code=the-code&state=good-state", cookies: ["other=1; authkit-1234=browser-cookie"], responder: 4)
        guard case .success(let grant) = effects.outcome else {
            Issue.record("the browser's callback did not end the wait: \(String(describing: effects.outcome))")
            return
        }
        #expect(grant.code == "the-code")
    }

    @Test func aStartLinkOpenedTwiceEndsTheSignIn() throws {
        var machine = machine()
        machine.prepare(Self.start)
        waiting(&machine)
        _ = machine.receive(target: "/authkit-start/link", responder: 1)
        let twice = machine.receive(target: "/authkit-start/link", responder: 2)
        guard case .failure(.startOpenedTwice) = twice.outcome else {
            Issue.record("a second opening did not end the sign-in: \(String(describing: twice.outcome))")
            return
        }
        #expect(replies(twice)[2]?.status == .conflict && replies(twice)[2]?.cookie == nil)
    }

    @Test func aNeighbourCannotEndOrJamTheWaitAndOnlyTheFirstRefusalsAreReported() {
        var machine = machine { $0.maxReportedRefusals = 2 }
        waiting(&machine)
        var reported: [AuthorizationError] = []
        for number in 0..<5 {
            let effects = machine.receive(target: "/callback?code=stolen&state=wrong-state", responder: number)
            #expect(effects.outcome == nil, "a wrong state never ends the wait")
            #expect(replies(effects)[number]?.location == "/authkit/ignored")
            reported += effects.refusals
        }
        #expect(reported.count == 2)
        #expect(machine.receive(target: "/elsewhere", responder: 9).replies.first?.1.title == "Not the sign-in callback")
        #expect(machine.receive(target: "/favicon.ico", responder: 10).refusals.isEmpty)
        let ended = machine.receive(target: "/callback?code=the-code&state=good-state", responder: 11)
        #expect((try? ended.outcome?.get())?.code == "the-code", "the sign-in still ends with the right callback")
    }

    @Test func aMalformedCallbackIsRefusedWithARedirectAndTheWaitGoesOn() {
        var machine = machine()
        waiting(&machine)
        let effects = machine.receive(target: "/callback?code=a&code=b&state=good-state", responder: 1)
        #expect(effects.outcome == nil && replies(effects)[1]?.location == "/authkit/malformed")
        #expect(effects.refusals.count == 1)
    }

    @Test func theProvidersErrorEndsTheWaitAndShowsOnlyOnTheFailedPage() {
        var machine = machine()
        waiting(&machine)
        let effects = machine.receive(target: "/callback?error=access_denied&state=good-state", responder: 1)
        guard case .failure(.providerError(let code, _, _)) = effects.outcome else {
            Issue.record("not the provider's error: \(String(describing: effects.outcome))")
            return
        }
        #expect(code == "access_denied")
        #expect(replies(effects)[1]?.location == "/authkit/failed")
        let page = machine.receive(target: "/authkit/failed", responder: 2)
        #expect(page.replies.first?.1.title == "Sign-in failed" && page.resultPageFetched)
        #expect(machine.receive(target: "/authkit/signed-in", responder: 3).replies.first?.1.status == .notFound)
    }

    @Test func anEarlyCallbackIsHeldUntilTheWaitStartsAndTheHoldIsBounded() {
        var machine = machine { $0.maxUnexpectedRequests = 1 }
        #expect(machine.receive(target: "/callback?code=the-code&state=good-state", responder: 1).replies.isEmpty)
        #expect(machine.heldCount == 1 && !machine.isWaiting)
        #expect(replies(machine.receive(target: "/callback?code=x&state=y", responder: 2))[2]?.status == .serviceUnavailable)
        guard case .waiting(let effects) = machine.wait(for: Self.expectation) else {
            Issue.record("the wait did not start")
            return
        }
        #expect((try? effects.outcome?.get())?.code == "the-code" && replies(effects)[1]?.location == "/authkit/signed-in")
        guard case .ended(.failure(.invalidRequest)) = machine.wait(for: Self.expectation) else {
            Issue.record("a second wait was not refused")
            return
        }
    }

    @Test func theTimeOutEndsTheWaitClosesTheListenerAndAnswersWhatWasHeld() {
        var machine = machine()
        _ = machine.receive(target: "/callback?code=late&state=good-state", responder: 1)
        let effects = machine.end(.failure(.timedOut(seconds: 300)))
        guard case .failure(.timedOut) = effects.outcome else {
            Issue.record("not the time-out: \(String(describing: effects.outcome))")
            return
        }
        #expect(effects.closeListener && !machine.awaitsResultPage)
        #expect(replies(effects)[1]?.location == "/authkit/already-used")
        #expect(machine.end(.failure(.cancelled)).outcome == nil, "the wait ends once")
        guard case .ended(.failure(.timedOut)) = machine.wait(for: Self.expectation) else {
            Issue.record("a wait after the end did not get the outcome")
            return
        }
    }

    @Test func atTheCapANewConnectionClosesTheOldestThatHasNotSentAWholeRequest() {
        var machine = machine { $0.maxConnections = 2 }
        let (first, none) = machine.connectionOpened("first")
        let (second, _) = machine.connectionOpened("second")
        #expect(none.closeConnections.isEmpty && first != second)
        machine.requestCompleted(first)
        #expect(machine.hasCompleteRequest(first) && !machine.hasCompleteRequest(second))
        let (_, third) = machine.connectionOpened("third")
        #expect(third.closeConnections == ["second"], "the complete one stays")
        machine.connectionClosed(first)
        let (_, fourth) = machine.connectionOpened("fourth")
        #expect(fourth.closeConnections.isEmpty, "room was made by a close")
    }
}
