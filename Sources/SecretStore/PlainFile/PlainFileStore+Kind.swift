extension PlainFileStore: StoreKind {
    public static let name = "plain-file"
    public static let summary = "unencrypted"
    public static let isPlainText = true
    public static let agentRecheckInterval: Double? = nil

    public static func make(_ context: StoreContext) -> any SecretStore {
        PlainFileStore()
    }
}
