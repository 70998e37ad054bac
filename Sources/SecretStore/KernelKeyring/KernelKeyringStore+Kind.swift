extension KernelKeyringStore: StoreKind {
    public static let name = "kernel-keyring"
    public static let summary = "memory only; SSH, servers, CI"
    public static let isPlainText = false
    /// A key read is as fast as the agent's memory: read on every request.
    public static let agentRecheckInterval: Double? = 0

    public static func make(_ context: StoreContext) -> any SecretStore {
        KernelKeyringStore()
    }
}
