extension SecretServiceStore: StoreKind {
    public static let name = "secret-service"
    public static let summary = "the desktop's keyring, the default"
    public static let isPlainText = false
    /// Read again at most a second after the agent last read it: another program may lock,
    /// replace or delete the sign-in.
    public static let agentRecheckInterval: Double? = nil

    public static func make(_ context: StoreContext) -> any SecretStore {
        SecretServiceStore(prompts: PromptPolicy(context))
    }
}
