/// One process-wide single flight per account and scope set: concurrent callers in one
/// process share one refresh.
actor RefreshCoordinator {
    static let shared = RefreshCoordinator()
    private var running: [String: Task<Result<AccessToken, AuthKitError>, Never>] = [:]

    func run(_ key: String, _ work: @escaping @Sendable () async -> Result<AccessToken, AuthKitError>) async
        -> Result<AccessToken, AuthKitError>
    {
        if let task = running[key] { return await task.value }
        let task = Task { await work() }
        running[key] = task
        let result = await task.value
        running[key] = nil
        return result
    }
}
