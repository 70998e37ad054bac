/// A forwarded socket's fetches that failed, each answered as it failed until a moment has
/// passed, so that a client in a loop cannot send the machine to the provider on every request.
/// Bounded: the expired go first, then all.
struct AgentFailedFetches {
    /// How long a failure is answered without asking again (seconds).
    static let interval: Double = 10
    static let capacity = 256

    private var failures: [AgentStateMachine.Key: (until: Double, failure: AgentFailure)] = [:]

    var count: Int { failures.count }

    /// The failure to answer `key` with at `monotonic` seconds, if one is still remembered.
    func failure(for key: AgentStateMachine.Key, at monotonic: Double) -> AgentFailure? {
        failures[key].flatMap { $0.until > monotonic ? $0.failure : nil }
    }

    mutating func remember(_ failure: AgentFailure, for key: AgentStateMachine.Key, at monotonic: Double) {
        if failures.count >= Self.capacity {
            failures = failures.filter { $0.value.until > monotonic }
            if failures.count >= Self.capacity { failures.removeAll() }
        }
        failures[key] = (monotonic + Self.interval, failure)
    }
}

extension AgentFailure {
    /// The answer of a forward whose time (`--for`) is over, also to a request that waited for
    /// a person's yes or a fetch until then.
    static let timeIsOver = AgentFailure(
        code: .refused, message: "this forward's time is over (it served for the --for it was opened with)",
        hint: "open a new one on the machine that holds the sign-in", category: .usage)
}
