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
    /// `http://<redirect host>:<port>`.
    let origin: String
    package let path: String
    /// Where the result pages are served: `/authkit/` followed by the result word, or
    /// `/authkit-result/` when the callback path itself starts with `/authkit/`.
    var resultPathPrefix: String { state.resultPrefix }

    /// 127.0.0.1, and for a `localhost` redirect [::1] on the same port too.
    private let channels: [any Channel]
    let state: CallbackReceiverCore

    /// The host name written into the redirect URI. The listener binds 127.0.0.1 either way, and
    /// for `localhost` [::1] on the same port too.
    public enum RedirectHost: String, Sendable, CaseIterable {
        /// `http://127.0.0.1:<port>/…`, as RFC 8252 §8.3 recommends (the default).
        case loopbackAddress = "127.0.0.1"
        /// `http://localhost:<port>/…`, for providers whose registrations accept only that name
        /// (Microsoft Entra apps registered with `http://localhost`). Browsers try `::1` first,
        /// so the receiver listens there too: nobody else may take that port on it.
        case localhost = "localhost"
    }

    private init(channels: [any Channel], port: Int, path: String, host: RedirectHost, state: CallbackReceiverCore) {
        self.channels = channels
        self.port = port
        self.path = path
        self.redirectURI = "http://\(host.rawValue):\(port)\(path)"
        self.origin = "http://\(host.rawValue):\(port)"
        self.state = state
    }

    /// Starts listening on 127.0.0.1 on `port`, or one the OS chooses (the default). `path` must
    /// start with `/`.
    package static func start(
        path: String = "/", redirectHost: RedirectHost = .loopbackAddress, port: Int? = nil, limits: Limits = Limits()
    ) async throws(AuthorizationError) -> LoopbackRedirectReceiver {
        guard path.hasPrefix("/"), !path.contains("?"), !path.contains("#"), !path.contains(" ") else {
            throw .invalidRequest("the redirect path must start with / and contain no ?, # or spaces")
        }
        let state = CallbackReceiverCore(path: path, limits: limits)
        let (channels, port) = try await listen(state: state, limits: limits, host: redirectHost, port: port)
        state.attach(listeners: channels, port: port)
        return LoopbackRedirectReceiver(channels: channels, port: port, path: path, host: redirectHost, state: state)
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
            if !Task.isCancelled { state.end(.failure(.timedOut(seconds: seconds))) }
        }
        defer { timeoutTask.cancel() }
        let result: Result<AuthorizationGrant, AuthorizationError> = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                state.install(expectation: expectation, onEvent: onEvent, continuation: continuation)
            }
        } onCancel: {
            state.end(.failure(.cancelled))
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
        state.end(.failure(.cancelled))
        await state.awaitResultPage()
        for channel in channels { try? await channel.close().get() }
    }

    deinit {
        for channel in channels { channel.close(promise: nil) }
    }
}

/// The receiver's I/O shell: holds the ``CallbackStateMachine`` under a mutex (NIO's event
/// loops and the waiting task both touch it) and carries out its effects outside the lock.
final class CallbackReceiverCore: Sendable {
    typealias Responder = @Sendable (CallbackReply) -> Void
    typealias Machine = CallbackStateMachine<any Channel, Responder>
    typealias Outcome = Machine.Outcome

    private struct Guarded {
        var machine: Machine
        var listeners: [any Channel] = []
        var continuation: CheckedContinuation<Outcome, Never>?
        var onEvent: (@Sendable (LoopbackRedirectReceiver.Event) -> Void)?
        /// When the callback that ended the wait was redirected, until its result page is
        /// fetched (or the grace period is over).
        var resultPendingSince: ContinuousClock.Instant?
        var resultWaiters: [CheckedContinuation<Void, Never>] = []
    }

    let limits: LoopbackRedirectReceiver.Limits
    let resultPrefix: String
    private let guarded: Mutex<Guarded>

    init(path: String, limits: LoopbackRedirectReceiver.Limits) {
        let machine = Machine(path: path, limits: limits)
        self.limits = limits
        self.resultPrefix = machine.resultPrefix
        self.guarded = Mutex(Guarded(machine: machine))
    }

    var isWaiting: Bool { guarded.withLock { $0.machine.isWaiting } }

    var heldCallbacks: Int { guarded.withLock { $0.machine.heldCount } }

    func attach(listeners: [any Channel], port: Int) {
        guarded.withLock {
            $0.listeners = listeners
            $0.machine.accept(port: port)
        }
    }

    func connectionOpened(_ channel: any Channel) -> Machine.ConnectionID {
        var id: Machine.ConnectionID = 0
        step { state in
            let (opened, effects) = state.machine.connectionOpened(channel)
            id = opened
            return effects
        }
        return id
    }

    func connectionClosed(_ id: Machine.ConnectionID) {
        guarded.withLock { $0.machine.connectionClosed(id) }
    }

    func requestCompleted(_ id: Machine.ConnectionID) {
        guarded.withLock { $0.machine.requestCompleted(id) }
    }

    func hasCompleteRequest(_ id: Machine.ConnectionID) -> Bool {
        guarded.withLock { $0.machine.hasCompleteRequest(id) }
    }

    /// Judges one whole GET request for `target`; the answer goes to `reply`.
    func receive(target: String, cookies: [String], host: [String], reply: @escaping Responder) {
        step { $0.machine.receive(target: target, cookies: cookies, host: host, responder: reply) }
    }

    func prepare(_ start: Machine.Start) {
        guarded.withLock { $0.machine.prepare(start) }
    }

    func install(
        expectation: CallbackExpectation,
        onEvent: @escaping @Sendable (LoopbackRedirectReceiver.Event) -> Void,
        continuation: CheckedContinuation<Outcome, Never>
    ) {
        var ended: Outcome?
        step { state in
            switch state.machine.wait(for: expectation) {
            case .ended(let outcome):
                ended = outcome
                return Machine.Effects()
            case .waiting(let effects):
                state.continuation = continuation
                state.onEvent = onEvent
                return effects
            }
        }
        if let ended { continuation.resume(returning: ended) }
    }

    /// Ends the wait once (time-out, cancellation); later calls do nothing.
    func end(_ outcome: Outcome) {
        step { $0.machine.end(outcome) }
    }

    /// Runs one step of the machine under the lock, then carries out its effects outside it.
    private func step(_ body: (inout Guarded) -> Machine.Effects) {
        let (effects, continuation, listeners, onEvent) = guarded.withLock { state in
            let effects = body(&state)
            var continuation: CheckedContinuation<Outcome, Never>?
            if effects.outcome != nil {
                continuation = state.continuation
                state.continuation = nil
                if state.machine.awaitsResultPage { state.resultPendingSince = .now }
            }
            return (effects, continuation, effects.closeListener ? state.listeners : [], state.onEvent)
        }
        if let outcome = effects.outcome { continuation?.resume(returning: outcome) }
        for connection in effects.closeConnections { connection.close(promise: nil) }
        for listener in listeners { listener.close(promise: nil) }
        var replies = effects.replies
        // The result page is done once it is written, not when asked for: close() returning
        // earlier let a failed sign-in's process end before the page reached the browser.
        if effects.resultPageFetched {
            if replies.isEmpty { graceOver() } else { replies[0].1.afterWrite = { [self] in graceOver() } }
        }
        for (responder, reply) in replies { responder(reply) }
        for error in effects.refusals { onEvent?(.refused(error)) }
    }

    /// Returns once the result page of the callback that ended the wait was fetched, at most
    /// ``LoopbackRedirectReceiver/Limits/resultPageGrace`` after its redirect; at once when
    /// there was no redirect.
    func awaitResultPage() async {
        guard let since = guarded.withLock({ $0.resultPendingSince }) else { return }
        let remaining = since + limits.resultPageGrace - ContinuousClock.now
        guard remaining > .zero else {
            graceOver()
            return
        }
        let timer = Task { [self] in
            try? await Task.sleep(for: remaining)
            graceOver()
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

    /// The grace period is over, or the result page was written: nothing more to wait for.
    private func graceOver() {
        let waiters = guarded.withLock { state in
            state.machine.resultPageGraceOver()
            state.resultPendingSince = nil
            defer { state.resultWaiters = [] }
            return state.resultWaiters
        }
        for waiter in waiters { waiter.resume() }
    }
}
