import CLibSecret

/// One or more libsecret/GIO async calls started together and waited for on the libsecret
/// thread, bounded in time.
///
/// libsecret's `_sync` functions run a private main loop we cannot bound, and GDBus's own
/// method-call timeout is 25 s. So we start the async variant with a `GCancellable`, attach
/// a timer to the thread's context and iterate that context until every call completed. The
/// timer first cancels the calls (GIO then completes them with `G_IO_ERROR_CANCELLED`, and
/// libsecret dismisses any prompt); if a call still has not completed one more interval
/// later, it is abandoned, so no call outlives twice its bound. An abandoned call keeps its
/// ``AsyncCall`` alive until its callback eventually runs.
final class AsyncCall {
    typealias Start = (_ cancellable: UnsafeMutablePointer<GCancellable>, _ callback: GAsyncReadyCallback, _ data: gpointer) -> Void

    let operation: String
    let cancellable: UnsafeMutablePointer<GCancellable>
    /// The GAsyncResult (referenced) once the call completed.
    fileprivate(set) var result: OpaquePointer?
    /// Set when the timer cancelled the call.
    fileprivate(set) var cancelledByTimer = false
    fileprivate(set) var seconds: Double = 0

    private init(operation: String) {
        self.operation = operation
        self.cancellable = g_cancellable_new()
    }

    deinit {
        if let result { g_object_unref(UnsafeMutableRawPointer(result)) }
        g_object_unref(cancellable)
    }

    /// Starts one call and waits for it.
    static func run(
        _ operation: String, timeout: Duration, on thread: LibSecretThread, _ start: @escaping Start
    ) throws(SecretStoreError) -> AsyncCall {
        try runAll([(operation, start)], timeout: timeout, on: thread)[0]
    }

    /// Starts several calls at once (they overlap on the bus) and waits for all of them.
    static func runAll(
        _ calls: [(String, Start)], timeout: Duration, on thread: LibSecretThread
    ) throws(SecretStoreError) -> [AsyncCall] {
        let started = calls.map { operation, start -> AsyncCall in
            let call = AsyncCall(operation: operation)
            // Retained for the callback, which releases it: an abandoned call stays valid.
            start(call.cancellable, asyncCallReady, Unmanaged.passRetained(call).toOpaque())
            return call
        }
        let timer = Timer(calls: started, seconds: timeout.seconds)
        let source = g_timeout_source_new(timer.milliseconds)
        g_source_set_callback(source, timerFired, Unmanaged.passUnretained(timer).toOpaque(), nil)
        g_source_attach(source, thread.context)
        while !timer.abandoned && started.contains(where: { $0.result == nil }) {
            g_main_context_iteration(thread.context, 1)
        }
        g_source_destroy(source)
        g_source_unref(source)
        withExtendedLifetime(timer) {}
        if timer.abandoned, let late = started.first(where: { $0.result == nil }) {
            throw .timedOut(operation: late.operation, seconds: timeout.seconds)
        }
        return started
    }

    /// Calls a `_finish` function with an error out-parameter and maps a failure.
    func finish<T>(_ body: (OpaquePointer, UnsafeMutablePointer<UnsafeMutablePointer<GError>?>) -> T) throws(SecretStoreError) -> T {
        var error: UnsafeMutablePointer<GError>?
        // `result` is set: runAll only returns completed calls.
        let value = body(result!, &error)
        if let error {
            defer { g_error_free(error) }
            if cancelledByTimer { throw .timedOut(operation: operation, seconds: seconds) }
            throw GLibError.map(error, operation: operation)
        }
        return value
    }

    /// The timer of one batch of calls.
    fileprivate final class Timer {
        let calls: [AsyncCall]
        let seconds: Double
        var fired = 0
        var abandoned = false
        init(calls: [AsyncCall], seconds: Double) {
            self.calls = calls
            self.seconds = seconds
        }
        var milliseconds: UInt32 { UInt32(max(1, min(seconds * 1000, Double(UInt32.max / 2)))) }
    }
}

private let asyncCallReady: GAsyncReadyCallback = { _, result, data in
    guard let data else { return }
    let call = Unmanaged<AsyncCall>.fromOpaque(data).takeRetainedValue()
    if let result { call.result = OpaquePointer(g_object_ref(UnsafeMutableRawPointer(result))) }
}

private let timerFired: GSourceFunc = { data in
    guard let data else { return 0 }
    let timer = Unmanaged<AsyncCall.Timer>.fromOpaque(data).takeUnretainedValue()
    timer.fired += 1
    if timer.fired == 1 {
        for call in timer.calls where call.result == nil {
            call.cancelledByTimer = true
            call.seconds = timer.seconds
            g_cancellable_cancel(call.cancellable)
        }
        return 1  // fire once more: the grace period for calls that ignore cancellation
    }
    timer.abandoned = true
    return 0
}

extension Duration {
    var seconds: Double {
        let (s, attoseconds) = components
        return Double(s) + Double(attoseconds) / 1e18
    }
}
