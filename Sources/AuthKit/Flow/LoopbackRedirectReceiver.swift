import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

/// Receives the browser's redirect at `http://127.0.0.1:<port>/<path>` (RFC 8252 §7.3).
///
/// * Binds 127.0.0.1 only, on a port the OS chooses; one sign-in per receiver.
/// * Exactly one callback ends the wait: a GET on the expected path whose `state` matches
///   (compared in constant time). A provider error with the right `state` ends it too (with
///   that error).
/// * A request on the callback path with a query (it may carry the code) is never answered
///   with a page: it gets `303 See Other` to a clean result path on this receiver
///   (`resultPathPrefix` + one word: `signed-in`, `failed`, `ignored`, `already-used`,
///   `malformed`), which serves the page — so the code leaves the address bar and the
///   history entry as soon as the browser arrives. `signed-in` and `failed` show a page only
///   once the sign-in has ended that way (a neighbour cannot make the browser claim a
///   success). Every response carries a strict Content-Security-Policy, `no-store`,
///   `no-referrer` and `nosniff`.
/// * After the wait ends the listener stays open until `close()`, which waits for the
///   browser to fetch the result page it was sent to — at most `Limits/resultPageGrace`
///   after the redirect, and not at all when no redirect was sent (paste mode, timeout).
/// * Anything else — another path, a missing or wrong `state`, a second callback — is refused
///   (an error page, through the redirect above when it has a query) and does not end or
///   satisfy the wait, however many come: only the right
///   callback, the timeout or cancellation end it (any local user can reach the
///   port, and must not be able to jam the sign-in). Work per request is bounded (target and
///   body size, a few seconds to send a whole request), connections are capped and the
///   oldest incomplete one makes room for a new one, and only the first few refusals are
///   reported to the person waiting.
/// * Request lines are never logged: they carry the authorization code.
public final class LoopbackRedirectReceiver: Sendable {
    package struct Limits: Sendable {
        /// Requests held while nobody waits yet (the browser was faster than the caller).
        package var maxUnexpectedRequests = 64
        /// Refused requests reported to the person waiting (``Event/refused(_:)``); later ones
        /// are answered and ignored silently, so a neighbour cannot flood the terminal.
        package var maxReportedRefusals = 8
        /// Longest request target (path and query) accepted, in bytes.
        package var maxTargetBytes = 16 * 1024
        /// Largest request body accepted (a callback has none), in bytes.
        package var maxBodyBytes = 4 * 1024
        /// Connections open at once; a new one closes the oldest that has not sent a whole
        /// request yet.
        package var maxConnections = 32
        /// Time a connection has to send one whole request.
        package var requestTimeout: TimeAmount = .seconds(5)
        /// Longest time ``LoopbackRedirectReceiver/close()`` keeps serving after the callback
        /// that ended the wait, for the browser to fetch the result page it was redirected to
        /// (counted from the redirect; `close()` returns as soon as the page was fetched).
        package var resultPageGrace: Duration = .seconds(2)

        package init() {}
    }

    /// Things worth telling the person waiting (the CLI shows them; nothing here prints).
    package enum Event: Sendable {
        /// A request was refused and the wait goes on.
        case refused(AuthorizationError)
    }

    /// `http://127.0.0.1:<port><path>` (or `localhost` in place of the address, see
    /// ``RedirectHost``), the `redirect_uri` to send.
    package let redirectURI: String
    package let port: Int
    package let path: String
    /// Where the result pages are served: `/authkit/` followed by the result word, or
    /// `/authkit-result/` when the callback path itself starts with `/authkit/`.
    var resultPathPrefix: String { state.resultPrefix }

    private let channel: any Channel
    private let state: ReceiverState

    /// The host name written into the redirect URI. The listener binds 127.0.0.1 either way.
    public enum RedirectHost: String, Sendable, CaseIterable {
        /// `http://127.0.0.1:<port>/…`, as RFC 8252 §8.3 recommends (the default).
        case loopbackAddress = "127.0.0.1"
        /// `http://localhost:<port>/…`, for providers whose registrations accept only that name
        /// (Microsoft Entra apps registered with `http://localhost`). Browsers that try `::1`
        /// first fall back to 127.0.0.1.
        case localhost = "localhost"
    }

    private init(channel: any Channel, port: Int, path: String, host: RedirectHost, state: ReceiverState) {
        self.channel = channel
        self.port = port
        self.path = path
        self.redirectURI = "http://\(host.rawValue):\(port)\(path)"
        self.state = state
    }

    /// Starts listening on 127.0.0.1 with a port chosen by the OS. `path` must start with `/`.
    package static func start(
        path: String = "/", redirectHost: RedirectHost = .loopbackAddress, limits: Limits = Limits()
    ) async throws(AuthorizationError) -> LoopbackRedirectReceiver {
        guard path.hasPrefix("/"), !path.contains("?"), !path.contains("#"), !path.contains(" ") else {
            throw .invalidRequest("the redirect path must start with / and contain no ?, # or spaces")
        }
        let state = ReceiverState(path: path, limits: limits)
        let channel: any Channel
        do {
            channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .serverChannelOption(ChannelOptions.backlog, value: 16)
                .childChannelInitializer { child in
                    let id = ObjectIdentifier(child)
                    state.connectionOpened(id, child)?.close(promise: nil)
                    child.closeFuture.whenComplete { _ in state.connectionClosed(id) }
                    // A whole request within requestTimeout, or the connection goes.
                    let deadline = child.eventLoop.scheduleTask(in: limits.requestTimeout) {
                        if !state.hasCompleteRequest(id) { child.close(promise: nil) }
                    }
                    child.closeFuture.whenComplete { _ in deadline.cancel() }
                    return child.eventLoop.makeCompletedFuture {
                        try child.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                        try child.pipeline.syncOperations.addHandlers([CallbackHTTPHandler(state: state, connection: id)])
                    }
                }
                .bind(host: "127.0.0.1", port: 0).get()
        } catch {
            throw .cannotListen("\(error)")
        }
        guard let port = channel.localAddress?.port else {
            try? await channel.close().get()
            throw .cannotListen("the OS assigned no port")
        }
        state.attach(listener: channel)
        return LoopbackRedirectReceiver(channel: channel, port: port, path: path, host: redirectHost, state: state)
    }

    /// Waits for the callback that answers `expectation`, at most `timeout` (default 5 min).
    /// Call once per receiver; callbacks that arrived before the call are judged now.
    package func waitForCallback(
        _ expectation: CallbackExpectation,
        timeout: Duration = .seconds(300),
        onEvent: @escaping @Sendable (Event) -> Void = { _ in }
    ) async throws(AuthorizationError) -> AuthorizationGrant {
        let seconds = Int(timeout.components.seconds)
        let timeoutTask = Task { [state] in
            try? await Task.sleep(for: timeout)
            if !Task.isCancelled { state.finish(.failure(.timedOut(seconds: seconds))) }
        }
        defer { timeoutTask.cancel() }
        let result: Result<AuthorizationGrant, AuthorizationError> = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                state.install(expectation: expectation, onEvent: onEvent, continuation: continuation)
            }
        } onCancel: {
            state.finish(.failure(.cancelled))
        }
        return try result.get()
    }

    /// Whether ``waitForCallback(_:timeout:onEvent:)`` has started waiting (callbacks are then
    /// judged as they arrive, not held).
    package var isWaiting: Bool { state.isWaiting }

    /// Callbacks that arrived before anyone waited, held until the wait starts.
    package var heldCallbacks: Int { state.heldCallbacks }

    /// Stops listening (idempotent). When the wait ended with a redirect to a result page,
    /// first waits for the browser to fetch that page, at most ``Limits/resultPageGrace``
    /// after the redirect. Ends a wait still in progress (as cancelled).
    package func close() async {
        state.finish(.failure(.cancelled))
        await state.awaitResultPage()
        try? await channel.close().get()
    }

    deinit {
        channel.close(promise: nil)
    }
}

/// The receiver's shared state: the expectation, the waiting continuation, counters.
/// Touched from NIO's event loops and from the waiting task, always under the mutex.
final class ReceiverState: Sendable {
    typealias Outcome = Result<AuthorizationGrant, AuthorizationError>

    /// How a request is answered: a page, or (with `location`) a redirect to a result page.
    struct Reply: Sendable {
        var status: HTTPResponseStatus
        var title: String
        var message: String
        var location: String? = nil
    }

    /// The pages a callback is redirected to, by the word in their path.
    enum ResultPage: String, Sendable, CaseIterable {
        /// The sign-in ended with this callback's code (shown only after a success).
        case signedIn = "signed-in"
        /// The provider answered with an error for this sign-in (shown only after that).
        case failed
        /// A callback with a state that is not this sign-in's.
        case ignored
        /// A callback after the sign-in ended.
        case alreadyUsed = "already-used"
        /// A request on the callback path that is not a valid callback.
        case malformed
    }

    private struct Pending {
        var target: String
        var reply: @Sendable (Reply) -> Void
    }

    private struct Guarded {
        var expectation: CallbackExpectation?
        var onEvent: (@Sendable (LoopbackRedirectReceiver.Event) -> Void)?
        var continuation: CheckedContinuation<Outcome, Never>?
        var outcome: Outcome?
        var pending: [Pending] = []
        var unexpected = 0
        /// Open connections, oldest first, and whether each has sent a whole request.
        var connections: [(id: ObjectIdentifier, channel: any Channel, complete: Bool)] = []
        var listener: (any Channel)?
        var waited = false
        /// The page shown at ``ResultPage/failed`` once the provider's error ended the wait.
        var failedReply: Reply?
        /// When the callback that ended the wait was redirected, until its result page is
        /// fetched (or the grace period is over).
        var resultPendingSince: ContinuousClock.Instant?
        var resultWaiters: [CheckedContinuation<Void, Never>] = []
    }

    let path: String
    let resultPrefix: String
    let limits: LoopbackRedirectReceiver.Limits
    private let guarded = Mutex(Guarded())

    init(path: String, limits: LoopbackRedirectReceiver.Limits) {
        self.path = path
        self.resultPrefix = path.hasPrefix("/authkit/") ? "/authkit-result/" : "/authkit/"
        self.limits = limits
    }

    func resultPath(_ result: ResultPage) -> String { resultPrefix + result.rawValue }

    /// A `303 See Other` to the page for `result`: the request's query (the code, the state)
    /// goes no further than this receiver.
    func redirect(to result: ResultPage) -> Reply {
        Reply(
            status: .seeOther, title: "Sign-in response received",
            message: "authkit has received the sign-in response.", location: resultPath(result))
    }

    func attach(listener: any Channel) {
        guarded.withLock { $0.listener = listener }
    }

    /// Registers a new connection; at the cap, returns the oldest incomplete one to close
    /// (connections already holding a whole request are never evicted).
    func connectionOpened(_ id: ObjectIdentifier, _ channel: any Channel) -> (any Channel)? {
        guarded.withLock { state in
            var evicted: (any Channel)?
            if state.connections.count >= limits.maxConnections,
                let oldest = state.connections.firstIndex(where: { !$0.complete })
            {
                evicted = state.connections.remove(at: oldest).channel
            }
            state.connections.append((id, channel, false))
            return evicted
        }
    }

    func connectionClosed(_ id: ObjectIdentifier) {
        guarded.withLock { state in state.connections.removeAll { $0.id == id } }
    }

    func requestCompleted(_ id: ObjectIdentifier) {
        guarded.withLock { state in
            if let index = state.connections.firstIndex(where: { $0.id == id }) { state.connections[index].complete = true }
        }
    }

    var isWaiting: Bool { guarded.withLock { $0.waited } }

    var heldCallbacks: Int { guarded.withLock { $0.pending.count } }

    func hasCompleteRequest(_ id: ObjectIdentifier) -> Bool {
        guarded.withLock { state in state.connections.first { $0.id == id }?.complete ?? false }
    }

    func install(
        expectation: CallbackExpectation,
        onEvent: @escaping @Sendable (LoopbackRedirectReceiver.Event) -> Void,
        continuation: CheckedContinuation<Outcome, Never>
    ) {
        let (ready, queued): (Outcome?, [Pending]) = guarded.withLock { state in
            if state.waited {
                return (.failure(.invalidRequest("a loopback receiver serves one sign-in")), [])
            }
            state.waited = true
            if let outcome = state.outcome { return (outcome, []) }
            state.expectation = expectation
            state.onEvent = onEvent
            state.continuation = continuation
            let queued = state.pending
            state.pending = []
            return (nil, queued)
        }
        if let ready {
            continuation.resume(returning: ready)
            return
        }
        for request in queued { handle(target: request.target, reply: request.reply) }
    }

    /// Ends the wait once; later calls do nothing. Closes the listener, unless the callback
    /// that ended the wait was redirected (`redirected`): then it stays open for the result
    /// page until ``LoopbackRedirectReceiver/close()``.
    func finish(_ outcome: Outcome, redirected: Bool = false, failedReply: Reply? = nil) {
        let (continuation, listener, queued): (CheckedContinuation<Outcome, Never>?, (any Channel)?, [Pending]) =
            guarded.withLock { state in
                guard state.outcome == nil else { return (nil, nil, []) }
                state.outcome = outcome
                state.failedReply = failedReply
                if redirected { state.resultPendingSince = .now }
                let continuation = state.continuation
                state.continuation = nil
                let queued = state.pending
                state.pending = []
                return (continuation, redirected ? nil : state.listener, queued)
            }
        continuation?.resume(returning: outcome)
        listener?.close(promise: nil)
        for request in queued { handle(target: request.target, reply: request.reply) }
    }

    /// Returns once the result page of the callback that ended the wait was fetched, at most
    /// ``LoopbackRedirectReceiver/Limits/resultPageGrace`` after its redirect; at once when
    /// there was no redirect.
    func awaitResultPage() async {
        guard let since = guarded.withLock({ $0.resultPendingSince }) else { return }
        let remaining = since + limits.resultPageGrace - ContinuousClock.now
        guard remaining > .zero else {
            releaseResultWaiters()
            return
        }
        let timer = Task { [self] in
            try? await Task.sleep(for: remaining)
            releaseResultWaiters()
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = guarded.withLock { state -> Bool in
                guard state.resultPendingSince != nil else { return true }
                state.resultWaiters.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
        timer.cancel()
    }

    /// The result page was fetched or the grace period is over: nothing more to wait for.
    private func releaseResultWaiters() {
        let waiters = guarded.withLock { state in
            state.resultPendingSince = nil
            defer { state.resultWaiters = [] }
            return state.resultWaiters
        }
        for waiter in waiters { waiter.resume() }
    }

    static let finishedReply = Reply(
        status: .gone, title: "Sign-in already finished",
        message: "This sign-in has already finished. You can close this window.")

    static let notFoundReply = Reply(status: .notFound, title: "Not found", message: "Not found.")

    static let signedInReply = Reply(
        status: .ok, title: "Signed in",
        message: "Sign-in complete. You can close this window and return to the terminal.")

    static let ignoredReply = Reply(
        status: .badRequest, title: "Not this sign-in",
        message: "This request does not answer the sign-in in progress, so it was ignored. "
            + "If you started a new login, use the newest browser window.")

    static let malformedReply = Reply(
        status: .badRequest, title: "Malformed callback",
        message: "This request is not a valid sign-in callback, so it was ignored. The sign-in in progress goes on.")

    /// The page at the result path for `result`, given how the sign-in stands. The two
    /// outcome pages show only the outcome that happened.
    private static func page(_ result: ResultPage, outcome: Outcome?, failedReply: Reply?) -> Reply {
        switch result {
        case .signedIn:
            if case .success = outcome { return signedInReply }
            return notFoundReply
        case .failed:
            if case .failure = outcome, let failedReply { return failedReply }
            return notFoundReply
        case .ignored: return ignoredReply
        case .alreadyUsed: return finishedReply
        case .malformed: return malformedReply
        }
    }

    /// Judges one GET request for `target` (path and query) and answers it through `reply`.
    func handle(target: String, reply: @escaping @Sendable (Reply) -> Void) {
        let parts = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        let requestPath = String(parts[0])
        let query = parts.count > 1 ? String(parts[1]) : ""

        // A query on the callback path may carry the code: answer with a redirect, never a page.
        let redirects = requestPath == path && !query.isEmpty

        enum Decision {
            case deferred
            case answer(Reply)
            case refuse(Reply, AuthorizationError?, (@Sendable (LoopbackRedirectReceiver.Event) -> Void)?)
            case finish(Reply, Outcome, failedReply: Reply?)
            case resultPageFetched(Reply)
        }

        let decision: Decision = guarded.withLock { state in
            if requestPath.hasPrefix(resultPrefix) {
                guard let result = ResultPage(rawValue: String(requestPath.dropFirst(resultPrefix.count))) else {
                    return .answer(Self.notFoundReply)
                }
                let page = Self.page(result, outcome: state.outcome, failedReply: state.failedReply)
                // The browser arrived at the result of the callback that ended the wait.
                if state.resultPendingSince != nil, page.status != .notFound, result == .signedIn || result == .failed {
                    return .resultPageFetched(page)
                }
                return .answer(page)
            }
            if state.outcome != nil { return .answer(redirects ? redirect(to: .alreadyUsed) : Self.finishedReply) }
            if requestPath == "/favicon.ico" {
                return .answer(Self.notFoundReply)
            }
            guard let expectation = state.expectation else {
                // The browser was faster than the caller: judge it once the expectation is known.
                if state.pending.count < limits.maxUnexpectedRequests {
                    state.pending.append(Pending(target: target, reply: reply))
                    return .deferred
                }
                return .answer(Reply(status: .serviceUnavailable, title: "Busy", message: "Too many requests."))
            }
            func refused(_ reply: Reply, _ error: AuthorizationError?) -> Decision {
                state.unexpected += 1
                return .refuse(reply, error, state.unexpected <= limits.maxReportedRefusals ? state.onEvent : nil)
            }
            guard requestPath == path else {
                return refused(
                    Reply(
                        status: .notFound, title: "Not the sign-in callback",
                        message: "authkit is waiting for the sign-in callback on another path."), nil)
            }
            let callback: AuthorizationCallback
            do throws(AuthorizationError) {
                callback = try AuthorizationCallback(query: query, path: requestPath)
            } catch {
                return refused(redirects ? redirect(to: .malformed) : Self.malformedReply, error)
            }
            switch expectation.evaluate(callback) {
            case .accepted(let grant):
                return .finish(redirect(to: .signedIn), .success(grant), failedReply: nil)
            case .ignored(let error):
                return refused(redirect(to: .ignored), error)
            case .failed(let error):
                let page = Reply(status: .badRequest, title: "Sign-in failed", message: error.description)
                return .finish(redirect(to: .failed), .failure(error), failedReply: page)
            }
        }

        switch decision {
        case .deferred:
            break
        case .answer(let answer):
            reply(answer)
        case .refuse(let answer, let error, let onEvent):
            reply(answer)
            if let error { onEvent?(.refused(error)) }
        case .finish(let answer, let outcome, let failedReply):
            // Recorded before the redirect goes out, so the result page it leads to is ready.
            finish(outcome, redirected: true, failedReply: failedReply)
            reply(answer)
        case .resultPageFetched(let answer):
            // Whoever fetches it first releases close(): another local user could only make
            // that wait shorter (the browser may then find the listener closed), never longer.
            reply(answer)
            releaseResultWaiters()
        }
    }
}

/// Reads one HTTP request at a time and hands GETs to the ``ReceiverState``.
private final class CallbackHTTPHandler: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let state: ReceiverState
    private let connection: ObjectIdentifier
    private var head: HTTPRequestHead?
    private var bodyBytes = 0
    private var rejected: ReceiverState.Reply?

    init(state: ReceiverState, connection: ObjectIdentifier) {
        self.state = state
        self.connection = connection
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
            bodyBytes = 0
            rejected = nil
            if head.method != .GET {
                rejected = .init(status: .methodNotAllowed, title: "Method not allowed", message: "Only GET is served here.")
            } else if head.uri.utf8.count > state.limits.maxTargetBytes {
                rejected = .init(status: .uriTooLong, title: "Request too long", message: "The request is too long.")
            }
        case .body(let buffer):
            bodyBytes += buffer.readableBytes
            if bodyBytes > state.limits.maxBodyBytes, rejected == nil {
                rejected = .init(status: .payloadTooLarge, title: "Too large", message: "The request is too large.")
                write(rejected!, context: context)
            }
        case .end:
            guard let head else { return }
            self.head = nil
            state.requestCompleted(connection)
            if let rejected {
                // A body that was too large was answered (and the connection closed) already.
                if rejected.status != .payloadTooLarge { write(rejected, context: context) }
                return
            }
            let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            let eventLoop = context.eventLoop
            state.handle(target: head.uri) { reply in
                eventLoop.execute {
                    let (handler, context) = loopBound.value
                    handler.write(reply, context: context)
                }
            }
        }
    }

    private func write(_ reply: ReceiverState.Reply, context: ChannelHandlerContext) {
        guard context.channel.isActive else { return }
        let body = Array(CallbackPage.html(title: reply.title, message: reply.message).utf8)
        var headers = NIOHTTP1.HTTPHeaders()
        headers.add(name: "Content-Type", value: "text/html; charset=utf-8")
        headers.add(name: "Content-Length", value: String(body.count))
        headers.add(name: "Cache-Control", value: "no-store")
        headers.add(name: "Connection", value: "close")
        headers.add(name: "Referrer-Policy", value: "no-referrer")
        headers.add(name: "X-Content-Type-Options", value: "nosniff")
        headers.add(name: "Content-Security-Policy", value: CallbackPage.contentSecurityPolicy)
        if let location = reply.location { headers.add(name: "Location", value: location) }
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: reply.status, headers: headers))), promise: nil)
        var buffer = context.channel.allocator.buffer(capacity: body.count)
        buffer.writeBytes(body)
        context.write(wrapOutboundOut(.body(.byteBuffer(buffer))), promise: nil)
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in
            channel.close(promise: nil)
        }
    }
}

/// The small pages the browser shows after the redirect.
enum CallbackPage {
    /// Nothing but the page's own inline style: no script, image, font, frame, form target or
    /// connection anywhere (`form-action`, `frame-ancestors` and `base-uri` do not fall back to
    /// `default-src`, so they are named).
    static let contentSecurityPolicy =
        "default-src 'none'; style-src 'unsafe-inline'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'"

    static func html(title: String, message: String) -> String {
        """
        <!doctype html><html lang="en"><head><meta charset="utf-8"><title>authkit: \(escape(title))</title>
        <style>body{font-family:system-ui,sans-serif;margin:3em auto;max-width:36em;line-height:1.5}</style>
        </head><body><h1>\(escape(title))</h1><p>\(escape(message))</p></body></html>

        """
    }

    static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.count)
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(character)
            }
        }
        return out
    }
}
