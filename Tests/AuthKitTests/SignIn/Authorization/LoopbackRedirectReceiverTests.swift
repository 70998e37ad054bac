import Foundation
import TestSupport
#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import AuthKit

@Suite("LoopbackRedirectReceiver")
struct LoopbackRedirectReceiverTests {
    let transport = CurlHTTPTransport()
    let issuer = "https://idp.example"

    func expectation(_ state: String = "good-state") -> CallbackExpectation {
        CallbackExpectation(state: state, issuer: issuer, issuerRequired: false)
    }

    /// 20 s: a bound, not a measurement — under the full suite two cores run CPU-bound fuzzing
    /// beside this, and an early callback is answered only once the wait has started.
    /// The status line the receiver answers `request` with, sent as it is through a socket to
    /// `peer` (a `sockaddr_in` or `sockaddr_in6`): for what an HTTP client would not send.
    static func statusLine<Address: Sendable>(of request: String, to peer: Address) async throws -> String {
        try await offThePool { () -> String in
            var peer = peer
            let family = Int32(withUnsafeBytes(of: &peer) { $0.load(as: sa_family_t.self) })
            let connection = socket(family, Int32(SOCK_STREAM.rawValue), 0)
            defer { close(connection) }
            let connected = withUnsafePointer(to: &peer) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    Glibc.connect(connection, $0, socklen_t(MemoryLayout<Address>.size))
                }
            }
            guard connected == 0 else { return "no connection" }
            let bytes = Array(request.utf8)
            _ = bytes.withUnsafeBytes { Glibc.write(connection, $0.baseAddress, $0.count) }
            var buffer = [UInt8](repeating: 0, count: 256)
            let count = buffer.withUnsafeMutableBytes { Glibc.read(connection, $0.baseAddress, $0.count) }
            return String(decoding: buffer.prefix(max(0, count)), as: UTF8.self).split(separator: "\r\n").first.map(String.init) ?? ""
        }
    }

    func get(_ receiver: LoopbackRedirectReceiver, _ target: String) async throws -> HTTPResponse {
        try await transport.send(HTTPRequest(url: URL(string: "http://127.0.0.1:\(receiver.port)\(target)")!, timeout: .seconds(20)))
    }

    /// The wait's own time-out in tests that are not about it: the product's five minutes. A
    /// shorter one ended the wait (and closed the listener) in the middle of a test that sends
    /// a dozen requests on a loaded machine; a test that hangs is ended by the HTTP bounds.
    static let waitLimit: Duration = .seconds(300)

    /// Starts waiting on `receiver` and returns once the wait is installed, so that a callback
    /// sent next is judged at once. (Sent earlier, it would be held until the waiting task
    /// runs — which, with both of the cooperative pool's threads busy with other suites, can
    /// take longer than any HTTP bound. `earlyCallback` covers that interleaving on purpose.)
    func startWait(
        _ receiver: LoopbackRedirectReceiver, timeout: Duration = Self.waitLimit,
        onEvent: @escaping @Sendable (LoopbackRedirectReceiver.Event) -> Void = { _ in }
    ) async throws -> Task<AuthorizationGrant, any Error> {
        let wait = Task { try await receiver.waitForCallback(expectation(), timeout: timeout, onEvent: onEvent) }
        try await until("the wait started") { receiver.isWaiting }
        return wait
    }

    func body(_ response: HTTPResponse) -> String { String(decoding: response.body, as: UTF8.self) }

    /// A callback's answer: a 303 to a result page on the receiver, with no query (the code
    /// stays behind) and the same strict headers as every page.
    func expectRedirect(_ response: HTTPResponse, to word: String, _ receiver: LoopbackRedirectReceiver) {
        #expect(response.status == 303)
        #expect(response.headers["Location"] == receiver.resultPathPrefix + word)
        expectStrictHeaders(response)
    }

    func expectStrictHeaders(_ response: HTTPResponse) {
        #expect(response.headers["Cache-Control"] == "no-store")
        #expect(response.headers["Referrer-Policy"] == "no-referrer")
        #expect(response.headers["X-Content-Type-Options"] == "nosniff")
        #expect(response.headers["Content-Security-Policy"]?.hasPrefix("default-src 'none'; style-src 'unsafe-inline';") == true)
    }

    /// Follows a redirect as a browser would (a new request to the same receiver).
    func follow(_ receiver: LoopbackRedirectReceiver, _ response: HTTPResponse) async throws -> HTTPResponse {
        let location = try #require(response.headers["Location"], "no Location in a \(response.status)")
        #expect(location.hasPrefix("/") && !location.contains("?"))
        return try await get(receiver, location)
    }

    @Test("listens on 127.0.0.1 with an OS-chosen port and the given path")
    func redirectURI() async throws {
        let receiver = try await LoopbackRedirectReceiver.start(path: "/callback")
        defer { Task { await receiver.close() } }
        #expect(receiver.redirectURI == "http://127.0.0.1:\(receiver.port)/callback")
        #expect(receiver.port > 0)
        let named = try await LoopbackRedirectReceiver.start(path: "/", redirectHost: .localhost)
        defer { Task { await named.close() } }
        #expect(named.redirectURI == "http://localhost:\(named.port)/")
        #expect(receiver.resultPathPrefix == "/authkit/")
        let nested = try await LoopbackRedirectReceiver.start(path: "/authkit/callback")
        defer { Task { await nested.close() } }
        #expect(nested.resultPathPrefix == "/authkit-result/", "never the callback path's own folder")
    }

    /// Browsers try [::1] first for `localhost`: for such a redirect the receiver listens there
    /// too, so no other local user can, and a named port taken there is refused.
    @Test("a localhost redirect listens on [::1] as well, on the same port")
    func localhostListensOnIPv6Loopback() async throws {
        let probe = socket(AF_INET6, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in6()
        address.sin6_family = sa_family_t(AF_INET6)
        address.sin6_addr = in6addr_loopback
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(probe, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
        }
        defer { close(probe) }
        guard bound == 0 else {
            withKnownIssue("no IPv6 loopback here", isIntermittent: true) { throw HarnessError("bind [::1]") }
            return
        }
        let receiver = try await LoopbackRedirectReceiver.start(path: "/", redirectHost: .localhost)
        defer { Task { await receiver.close() } }
        let port6 = receiver.port
        var peer6 = sockaddr_in6()
        peer6.sin6_family = sa_family_t(AF_INET6)
        peer6.sin6_addr = in6addr_loopback
        peer6.sin6_port = UInt16(port6).bigEndian
        let statusLine = try await Self.statusLine(
            of: "GET /favicon.ico HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n", to: peer6)
        #expect(statusLine.hasPrefix("HTTP/1.1 404"), "the receiver answers on [::1]: \(statusLine)")

        // A named port someone else holds on [::1]: refused, saying where.
        Glibc.listen(probe, 1)
        var taken = sockaddr_in6()
        var length = socklen_t(MemoryLayout<sockaddr_in6>.size)
        _ = withUnsafeMutablePointer(to: &taken) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(probe, $0, &length) }
        }
        let port = Int(UInt16(bigEndian: taken.sin6_port))
        do {
            let squatted = try await LoopbackRedirectReceiver.start(path: "/", redirectHost: .localhost, port: port)
            await squatted.close()
            Issue.record("a port taken on [::1] was used")
        } catch {
            guard case .cannotListen(let reason) = error else { throw error }
            #expect(reason.contains("[::1]"), "\(reason)")
        }
    }

    @Test("wrong path, missing state, wrong state and a replayed callback do not end the wait; the genuine one does")
    func onlyGenuineCallbackCompletes() async throws {
        let receiver = try await LoopbackRedirectReceiver.start(path: "/callback")
        let refusals = RefusalLog()
        let wait = try await startWait(receiver) { event in
            if case .refused(let error) = event { refusals.add(error) }
        }
        let wrongPath = try await get(receiver, "/other?code=x&state=good-state")
        let noState = try await get(receiver, "/callback?code=x")
        let wrongState = try await get(receiver, "/callback?code=x&state=bad-state")
        let replay = try await get(receiver, "/callback?code=old-code&state=state-of-an-earlier-login")
        let duplicate = try await get(receiver, "/callback?code=x&code=y&state=good-state")
        #expect(wrongPath.status == 404)
        expectStrictHeaders(wrongPath)
        // Callbacks that carry a query are redirected to a clean page, even when refused.
        expectRedirect(noState, to: "ignored", receiver)
        expectRedirect(wrongState, to: "ignored", receiver)
        expectRedirect(replay, to: "ignored", receiver)
        expectRedirect(duplicate, to: "malformed", receiver)
        let ignoredPage = try await follow(receiver, wrongState)
        #expect(ignoredPage.status == 400)
        #expect(body(ignoredPage).contains("Not this sign-in"))
        expectStrictHeaders(ignoredPage)
        let malformedPage = try await follow(receiver, duplicate)
        #expect(malformedPage.status == 400)
        #expect(body(malformedPage).contains("Malformed callback"))
        // Before the sign-in ended, its success page shows nothing (a neighbour's link to it
        // cannot make the browser claim a success).
        #expect(try await get(receiver, receiver.resultPathPrefix + "signed-in").status == 404)
        #expect(try await get(receiver, receiver.resultPathPrefix + "failed").status == 404)

        let genuine = try await get(receiver, "/callback?code=the-code&state=good-state")
        expectRedirect(genuine, to: "signed-in", receiver)
        #expect(!body(genuine).contains("the-code"))
        let grant = try await wait.value
        #expect(grant.code == "the-code")
        #expect(refusals.count == 4)  // the wrong path is refused without an event
        let page = try await follow(receiver, genuine)
        #expect(page.status == 200)
        #expect(body(page).contains("Sign-in complete"))
        expectStrictHeaders(page)
        #expect(try await get(receiver, receiver.resultPathPrefix + "failed").status == 404, "only the outcome that happened")

        // The listener stays up until close(): the callback again is "already used".
        let late = try await get(receiver, "/callback?code=the-code&state=good-state")
        expectRedirect(late, to: "already-used", receiver)
        let used = try await follow(receiver, late)
        #expect(used.status == 410)
        #expect(body(used).contains("already finished"))

        // After close() nothing listens (a connection the kernel accepted just before the
        // close is reset).
        await receiver.close()
        do {
            let after = try await get(receiver, "/callback?code=the-code&state=good-state")
            Issue.record("answered \(after.status) after close()")
        } catch let error as HTTPError {
            switch error {
            case .cannotConnect, .connectionLost: break
            default: Issue.record("unexpected \(error)")
            }
        }
    }

    @Test("close() waits for the browser to fetch the result page, at most the grace period, and not at all without a redirect")
    func closeWaitsForTheResultPage() async throws {
        // Fetched: close() returns without waiting out a long grace period.
        var patient = LoopbackRedirectReceiver.Limits()
        patient.resultPageGrace = .seconds(60)
        let fetched = try await LoopbackRedirectReceiver.start(limits: patient)
        let wait = try await startWait(fetched)
        let redirect = try await get(fetched, "/?code=c&state=good-state")
        _ = try await wait.value
        let closing = Task { await fetched.close() }
        try await Task.sleep(for: .milliseconds(100))
        #expect(try await follow(fetched, redirect).status == 200, "still served while close() waits")
        let started = ContinuousClock.now
        await closing.value
        #expect(ContinuousClock.now - started < .seconds(30), "a bound: close() returned once the page was fetched")

        // Not fetched: close() gives up after the grace period (counted from the redirect).
        var brief = LoopbackRedirectReceiver.Limits()
        brief.resultPageGrace = .milliseconds(700)
        let abandoned = try await LoopbackRedirectReceiver.start(limits: brief)
        let abandonedWait = try await startWait(abandoned)
        let redirected = ContinuousClock.now
        expectRedirect(try await get(abandoned, "/?code=c&state=good-state"), to: "signed-in", abandoned)
        _ = try await abandonedWait.value
        await abandoned.close()
        let waited = ContinuousClock.now - redirected
        #expect(waited >= .milliseconds(600), "close() waited for the browser: \(waited)")
        #expect(waited < .seconds(30), "a bound: \(waited)")

        // No redirect was sent (the wait timed out): close() does not wait at all.
        let unused = try await LoopbackRedirectReceiver.start(limits: patient)
        _ = try? await unused.waitForCallback(expectation(), timeout: .seconds(1))
        let closeStarted = ContinuousClock.now
        await unused.close()
        #expect(ContinuousClock.now - closeStarted < .seconds(30), "a bound: the 60 s grace was not waited out")
    }

    @Test("a provider error with the right state ends the wait with that error, escaped in the page")
    func providerError() async throws {
        let receiver = try await LoopbackRedirectReceiver.start(path: "/")
        let wait = try await startWait(receiver)
        let redirect = try await get(
            receiver, "/?error=access_denied&error_description=%3Cscript%3Ealert(1)%3C%2Fscript%3E&state=good-state")
        expectRedirect(redirect, to: "failed", receiver)
        await #expect(throws: AuthorizationError.providerError(code: "access_denied", description: "<script>alert(1)</script>", uri: nil)) {
            _ = try await wait.value
        }
        let response = try await follow(receiver, redirect)
        #expect(response.status == 400)
        #expect(body(response).contains("Sign-in failed"))
        #expect(!body(response).contains("<script>"))
        #expect(body(response).contains("&lt;script&gt;"))
        #expect(try await get(receiver, receiver.resultPathPrefix + "signed-in").status == 404, "only the outcome that happened")
    }

    /// A page whose own name it made resolve to 127.0.0.1 (DNS rebinding) names that name in
    /// `Host`: through the real socket, the right callback under it is "not found" and the wait
    /// goes on; under the receiver's own name it ends the wait.
    @Test("a request naming another host is not served, even the right callback")
    func otherHostIsNotServed() async throws {
        let receiver = try await LoopbackRedirectReceiver.start(path: "/")
        let wait = try await startWait(receiver)
        let port = receiver.port
        var peer = sockaddr_in()
        peer.sin_family = sa_family_t(AF_INET)
        peer.sin_addr.s_addr = inet_addr("127.0.0.1")
        peer.sin_port = UInt16(port).bigEndian
        let statusLine = try await Self.statusLine(
            of: "GET /?code=c&state=good-state HTTP/1.1\r\nHost: rebound.example:\(port)\r\nConnection: close\r\n\r\n", to: peer)
        #expect(statusLine.hasPrefix("HTTP/1.1 404"), "\(statusLine)")
        #expect(receiver.isWaiting)
        expectRedirect(try await get(receiver, "/?code=c&state=good-state"), to: "signed-in", receiver)
        #expect(try await wait.value.code == "c")
    }

    @Test("a wrong iss with the right state fails the sign-in")
    func issuerMismatch() async throws {
        let receiver = try await LoopbackRedirectReceiver.start()
        let wait = try await startWait(receiver)
        _ = try await get(receiver, "/?code=c&state=good-state&iss=https%3A%2F%2Fevil.example")
        await #expect(throws: AuthorizationError.issuerMismatch(expected: issuer)) { _ = try await wait.value }
    }

    @Test("a callback that arrives before the wait starts is judged when it starts")
    func earlyCallback() async throws {
        let receiver = try await LoopbackRedirectReceiver.start()
        // The request is held until the wait starts: its own bound is the wait's, not 20 s.
        let early = Task {
            try await transport.send(
                HTTPRequest(url: URL(string: "http://127.0.0.1:\(receiver.port)/?code=early&state=good-state")!, timeout: Self.waitLimit))
        }
        try await until("the early callback is held", timeout: Self.waitLimit) { receiver.heldCallbacks == 1 }
        #expect(!receiver.isWaiting)
        let grant = try await receiver.waitForCallback(expectation(), timeout: Self.waitLimit)
        #expect(grant.code == "early")
        #expect(try await early.value.status == 303)
    }

    @Test("no callback in time ends the wait with timedOut")
    func timeout() async throws {
        let receiver = try await LoopbackRedirectReceiver.start()
        await #expect(throws: AuthorizationError.timedOut(seconds: 1)) {
            _ = try await receiver.waitForCallback(expectation(), timeout: .seconds(1))
        }
    }

    /// Any local user can reach the port. 200 forged callbacks do not end the wait
    /// (only the first few are reported), and the real one still signs in.
    @Test("200 forged callbacks, then the real one: signed in")
    func forgedFlood() async throws {
        let receiver = try await LoopbackRedirectReceiver.start()
        let reported = Counter()
        let wait = try await startWait(receiver) { _ in reported.increment() }
        for index in 0..<200 { _ = try? await get(receiver, "/?code=x&state=forged-\(index)") }
        let genuine = try await get(receiver, "/?code=real&state=good-state")
        expectRedirect(genuine, to: "signed-in", receiver)
        #expect(try await wait.value.code == "real")
        #expect(reported.value == LoopbackRedirectReceiver.Limits().maxReportedRefusals)
    }

    /// 100 connections that send half a request and wait: the oldest make room, each gets
    /// a few seconds at most, and the real callback is served within seconds.
    @Test("100 half-open connections, then the real callback: signed in within seconds")
    func halfOpenConnections() async throws {
        let receiver = try await LoopbackRedirectReceiver.start()
        let wait = try await startWait(receiver)
        var sockets: [Int32] = []
        defer { for socket in sockets { close(socket) } }
        for _ in 0..<100 {
            let fd = try Self.connect(port: receiver.port)
            _ = "GET /?code=x&sta".withCString { send(fd, $0, strlen($0), 0) }
            sockets.append(fd)
        }
        let started = ContinuousClock.now
        let genuine = try await get(receiver, "/?code=real&state=good-state")
        expectRedirect(genuine, to: "signed-in", receiver)
        #expect(try await wait.value.code == "real")
        #expect(
            ContinuousClock.now - started < .seconds(25), "a bound: starved, the callback would wait for the 30 s idle eviction or be reset"
        )
    }

    /// A 1 MB request line is refused; the wait goes on.
    @Test("a 1 MB request line is refused and the wait goes on")
    func megabyteRequestLine() async throws {
        let receiver = try await LoopbackRedirectReceiver.start()
        let wait = try await startWait(receiver)
        let fd = try Self.connect(port: receiver.port)
        let line = "GET /?" + String(repeating: "a", count: 1 << 20) + " HTTP/1.1\r\nHost: x\r\n\r\n"
        _ = line.withCString { send(fd, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
        close(fd)
        let genuine = try await get(receiver, "/?code=real&state=good-state")
        expectRedirect(genuine, to: "signed-in", receiver)
        #expect(try await wait.value.code == "real")
    }

    static func connect(port: Int) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 else { throw HarnessError("cannot connect to 127.0.0.1:\(port)") }
        return fd
    }

    @Test("an oversized request is refused and the wait goes on")
    func oversized() async throws {
        let receiver = try await LoopbackRedirectReceiver.start()
        let wait = try await startWait(receiver)
        let huge = try await get(receiver, "/?code=x&state=good-state&pad=" + String(repeating: "a", count: 20_000))
        #expect(huge.status == 414)
        let genuine = try await get(receiver, "/?code=ok&state=good-state")
        expectRedirect(genuine, to: "signed-in", receiver)
        #expect(try await wait.value.code == "ok")
    }

    @Test("only GET is served")
    func onlyGet() async throws {
        let receiver = try await LoopbackRedirectReceiver.start()
        defer { Task { await receiver.close() } }
        let response = try await transport.send(
            .form(URL(string: "http://127.0.0.1:\(receiver.port)/")!, fields: [("code", "x"), ("state", "good-state")]))
        #expect(response.status == 405)
    }

    @Test("one sign-in per receiver")
    func oneWaitOnly() async throws {
        let receiver = try await LoopbackRedirectReceiver.start()
        let wait = try await startWait(receiver)
        _ = try await get(receiver, "/?code=one&state=good-state")
        _ = try await wait.value
        await #expect(throws: AuthorizationError.self) {
            _ = try await receiver.waitForCallback(expectation(), timeout: .seconds(1))
        }
    }
}

final class RefusalLog: @unchecked Sendable {
    private let lock = NSLock()
    private var errors: [AuthorizationError] = []
    func add(_ error: AuthorizationError) { lock.lock(); errors.append(error); lock.unlock() }
    var count: Int { lock.lock(); defer { lock.unlock() }; return errors.count }
}

/// A thread-safe count for event callbacks.
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func increment() { lock.lock(); count += 1; lock.unlock() }
    var value: Int { lock.lock(); defer { lock.unlock() }; return count }
}
