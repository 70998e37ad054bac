/// The loopback receiver's rules, without sockets: which connection makes room for a new one,
/// which request ends the sign-in, what each request is answered and what the person waiting
/// is told. ``LoopbackRedirectReceiver`` feeds it what happens and carries out the ``Effects``
/// it returns.
///
/// * Only the callback on the expected path whose `state` matches ends the wait (or the
///   provider's error with that `state`); anything else is refused and the wait goes on, however
///   many come — any local user can reach the port and must not be able to jam the sign-in.
/// * A request on the callback path with a query (it may carry the code) is answered with a
///   redirect to a clean result path, never with a page. The `signed-in` and `failed` pages
///   show only the outcome that happened.
/// * Requests that arrive before anyone waits are held (at most
///   ``LoopbackRedirectReceiver/Limits/maxUnexpectedRequests``) and judged when the wait starts.
/// * Only the first ``LoopbackRedirectReceiver/Limits/maxReportedRefusals`` refusals are
///   reported.
/// * At the connection cap, a new connection closes the oldest one that has not sent a whole
///   request.
///
/// `Connection` and `Responder` are whatever the shell needs to close a connection and to
/// answer a request (a channel and a closure there; plain values in tests).
struct CallbackStateMachine<Connection: Sendable, Responder: Sendable>: Sendable {
    typealias Outcome = Result<AuthorizationGrant, AuthorizationError>
    typealias ConnectionID = UInt64

    /// What the shell does after a step, in this order: resume the wait with `outcome`, close
    /// `closeConnections` and (when `closeListener`) the listener, send `replies`, report
    /// `refusals` to the person waiting, and (when `resultPageFetched`) let `close()` return.
    struct Effects: Sendable {
        var outcome: Outcome?
        var closeListener = false
        var closeConnections: [Connection] = []
        var replies: [(Responder, CallbackReply)] = []
        var refusals: [AuthorizationError] = []
        var resultPageFetched = false
    }

    /// The answer to ``CallbackStateMachine/wait(for:)``.
    enum WaitStart: Sendable {
        /// Wait: the outcome comes in later effects. `effects` judge the requests held so far.
        case waiting(Effects)
        /// Do not wait: the sign-in has ended (or a wait was started before).
        case ended(Outcome)
    }

    let path: String
    /// Where the result pages are served: `/authkit/` followed by the result word, or
    /// `/authkit-result/` when the callback path itself starts with `/authkit/`.
    let resultPrefix: String
    let limits: LoopbackRedirectReceiver.Limits

    /// The browser's way in, where authkit opens one: a one-time link that sets a cookie and
    /// leads to the authorization URL. The URL (its `state`) then never is an argument any local
    /// user can read, and only the browser that opened the link has the cookie a callback needs.
    struct Start: Sendable {
        /// `/authkit-start/<token>`.
        var path: String
        var cookieName: String
        var cookieValue: String
        /// The authorization URL.
        var location: String
        var maxAge: Int
    }

    /// The `Host` values a request may name (`127.0.0.1:PORT` …), once the port is known: a
    /// page elsewhere that made its own name resolve to 127.0.0.1 (DNS rebinding) names its own.
    private var hosts: Set<String>?
    private var expectation: CallbackExpectation?
    private var outcome: Outcome?
    private var start: Start?
    private var startOpened = false
    private var held: [(target: String, cookies: [String], host: [String]?, responder: Responder)] = []
    private var refusalCount = 0
    private var connections: [(id: ConnectionID, connection: Connection, complete: Bool)] = []
    private var nextConnection: ConnectionID = 0
    private(set) var isWaiting = false
    /// The page shown at ``CallbackResultPage/failed`` once the provider's error ended the wait.
    private var failedReply: CallbackReply?
    /// The callback that ended the wait was redirected and its result page is not fetched yet.
    private(set) var awaitsResultPage = false

    init(path: String, limits: LoopbackRedirectReceiver.Limits) {
        self.path = path
        self.resultPrefix = path.hasPrefix("/authkit/") ? "/authkit-result/" : "/authkit/"
        self.limits = limits
    }

    var heldCount: Int { held.count }

    /// From now on a request must name the receiver in its `Host` header: as the redirect URI
    /// does, or by the other loopback names of `port`.
    mutating func accept(port: Int) {
        let names = ["127.0.0.1", "localhost", "[::1]"]
        hosts = Set(names.map { "\($0):\(port)" } + (port == 80 ? names : []))
    }

    /// From now on a callback needs the cookie the start link sets (browser mode).
    mutating func prepare(_ start: Start) {
        self.start = start
    }

    // MARK: Connections

    /// Admits a connection; at the cap, the effects close the oldest incomplete one
    /// (connections already holding a whole request are never evicted).
    mutating func connectionOpened(_ connection: Connection) -> (ConnectionID, Effects) {
        var effects = Effects()
        if connections.count >= limits.maxConnections, let oldest = connections.firstIndex(where: { !$0.complete }) {
            effects.closeConnections.append(connections.remove(at: oldest).connection)
        }
        nextConnection += 1
        connections.append((nextConnection, connection, false))
        return (nextConnection, effects)
    }

    mutating func connectionClosed(_ id: ConnectionID) {
        connections.removeAll { $0.id == id }
    }

    mutating func requestCompleted(_ id: ConnectionID) {
        if let index = connections.firstIndex(where: { $0.id == id }) { connections[index].complete = true }
    }

    /// Whether the connection has sent a whole request (else its time is up, it goes).
    func hasCompleteRequest(_ id: ConnectionID) -> Bool {
        connections.first { $0.id == id }?.complete ?? false
    }

    // MARK: The wait

    /// Starts the one wait this receiver serves.
    mutating func wait(for expectation: CallbackExpectation) -> WaitStart {
        if isWaiting { return .ended(.failure(.invalidRequest("a loopback receiver serves one sign-in"))) }
        isWaiting = true
        if let outcome { return .ended(outcome) }
        self.expectation = expectation
        return .waiting(judgeHeld())
    }

    /// Ends the wait (time-out, cancellation); nothing when it has ended already.
    mutating func end(_ outcome: Outcome) -> Effects {
        guard self.outcome == nil else { return Effects() }
        return finish(outcome, redirected: false, failedReply: nil)
    }

    /// The grace period for the result page is over: `close()` need not wait any longer.
    mutating func resultPageGraceOver() {
        awaitsResultPage = false
    }

    private mutating func finish(_ outcome: Outcome, redirected: Bool, failedReply: CallbackReply?) -> Effects {
        self.outcome = outcome
        self.failedReply = failedReply
        awaitsResultPage = redirected
        var effects = Effects(outcome: outcome, closeListener: !redirected)
        effects.merge(judgeHeld())
        return effects
    }

    private mutating func judgeHeld() -> Effects {
        var effects = Effects()
        let requests = held
        held = []
        for request in requests {
            effects.merge(receive(target: request.target, cookies: request.cookies, host: request.host, responder: request.responder))
        }
        return effects
    }

    // MARK: Requests

    /// Judges one whole GET request for `target` (path and query), with its `Cookie` and `Host`
    /// headers.
    mutating func receive(target: String, cookies: [String] = [], host: [String]? = nil, responder: Responder) -> Effects {
        if let hosts {
            guard let host, host.count == 1, hosts.contains(host[0].lowercased()) else { return Effects(replies: [(responder, .notFound)]) }
        }
        let parts = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        let requestPath = String(parts[0])
        let query = parts.count > 1 ? String(parts[1]) : ""
        // A query on the callback path may carry the code: answer with a redirect, never a page.
        let redirects = requestPath == path && !query.isEmpty

        if let start, requestPath == start.path {
            guard !startOpened else {
                // Opened twice: whoever read it from a command line may be racing the person.
                guard outcome == nil else { return Effects(replies: [(responder, .finished)]) }
                var effects = finish(.failure(.startOpenedTwice), redirected: false, failedReply: nil)
                effects.replies.insert((responder, .openedTwice), at: 0)
                return effects
            }
            startOpened = true
            let cookie = "\(start.cookieName)=\(start.cookieValue); Path=/; HttpOnly; SameSite=Lax; Max-Age=\(start.maxAge)"
            let reply = CallbackReply(
                status: .seeOther, title: "Signing in", message: "Continue at the provider.", location: start.location, cookie: cookie)
            return Effects(replies: [(responder, reply)])
        }

        if requestPath.hasPrefix(resultPrefix) {
            guard let result = CallbackResultPage(rawValue: String(requestPath.dropFirst(resultPrefix.count))) else {
                return Effects(replies: [(responder, .notFound)])
            }
            let page = self.page(result)
            var effects = Effects(replies: [(responder, page)])
            // The browser arrived at the result of the callback that ended the wait. Whoever
            // fetches it first lets close() return: another local user could only make that
            // wait shorter (the browser may then find the listener closed), never longer.
            if awaitsResultPage, page.status != .notFound, result == .signedIn || result == .failed {
                awaitsResultPage = false
                effects.resultPageFetched = true
            }
            return effects
        }
        if outcome != nil { return Effects(replies: [(responder, redirects ? redirect(to: .alreadyUsed) : .finished)]) }
        if requestPath == "/favicon.ico" { return Effects(replies: [(responder, .notFound)]) }
        guard let expectation else {
            // The browser was faster than the caller: judge it once the expectation is known.
            if held.count < limits.maxUnexpectedRequests {
                held.append((target, cookies, host, responder))
                return Effects()
            }
            return Effects(replies: [(responder, .busy)])
        }
        guard requestPath == path else { return refuse(responder, .wrongPath, reporting: nil) }
        // In browser mode only the browser the start link went to answers.
        if let start, !Self.carries(cookies, start) {
            return refuse(responder, redirects ? redirect(to: .ignored) : .ignored, reporting: .otherBrowser)
        }
        let callback: AuthorizationCallback
        do throws(AuthorizationError) {
            callback = try AuthorizationCallback(query: query, path: requestPath)
        } catch {
            return refuse(responder, redirects ? redirect(to: .malformed) : .malformed, reporting: error)
        }
        switch expectation.evaluate(callback) {
        case .accepted(let grant):
            // Recorded before the redirect goes out, so the result page it leads to is ready.
            var effects = finish(.success(grant), redirected: true, failedReply: nil)
            effects.replies.insert((responder, redirect(to: .signedIn)), at: 0)
            return effects
        case .ignored(let error):
            return refuse(responder, redirect(to: .ignored), reporting: error)
        case .failed(let error):
            let page = CallbackReply(status: .badRequest, title: "Sign-in failed", message: error.description)
            var effects = finish(.failure(error), redirected: true, failedReply: page)
            effects.replies.insert((responder, redirect(to: .failed)), at: 0)
            return effects
        }
    }

    /// Whether the `Cookie` headers hold the start link's cookie (compared in constant time).
    static func carries(_ headers: [String], _ start: Start) -> Bool {
        var found = false
        for header in headers {
            for pair in header.split(separator: ";") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                guard parts.count == 2, parts[0].trimmingASCIIWhitespace() == start.cookieName else { continue }
                if ConstantTime.equals(parts[1].trimmingASCIIWhitespace(), start.cookieValue) { found = true }
            }
        }
        return found
    }

    private mutating func refuse(_ responder: Responder, _ reply: CallbackReply, reporting error: AuthorizationError?) -> Effects {
        refusalCount += 1
        var effects = Effects(replies: [(responder, reply)])
        if let error, refusalCount <= limits.maxReportedRefusals { effects.refusals.append(error) }
        return effects
    }

    func resultPath(_ result: CallbackResultPage) -> String { resultPrefix + result.rawValue }

    /// A `303 See Other` to the page for `result`: the request's query (the code, the state)
    /// goes no further than this receiver.
    func redirect(to result: CallbackResultPage) -> CallbackReply {
        CallbackReply(
            status: .seeOther, title: "Sign-in response received", message: "authkit has received the sign-in response.",
            location: resultPath(result))
    }

    /// The page at the result path for `result`, given how the sign-in stands.
    private func page(_ result: CallbackResultPage) -> CallbackReply {
        switch result {
        case .signedIn:
            if case .success = outcome { return .signedIn }
            return .notFound
        case .failed:
            if case .failure = outcome, let failedReply { return failedReply }
            return .notFound
        case .ignored: return .ignored
        case .alreadyUsed: return .finished
        case .malformed: return .malformed
        }
    }
}

extension CallbackStateMachine.Effects {
    mutating func merge(_ other: Self) {
        if outcome == nil { outcome = other.outcome }
        closeListener = closeListener || other.closeListener
        closeConnections += other.closeConnections
        replies += other.replies
        refusals += other.refusals
        resultPageFetched = resultPageFetched || other.resultPageFetched
    }
}
