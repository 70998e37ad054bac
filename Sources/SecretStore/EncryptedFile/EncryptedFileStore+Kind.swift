extension EncryptedFileStore: StoreKind {
    public static let name = "encrypted-file"
    public static let summary = "age-encrypted files; servers, survives reboot, unlocked once per boot"
    public static let isPlainText = false
    /// Read on every request: `authkit lock` (or an expired unlock) takes effect at once, and
    /// a read is a small file and one X25519 operation.
    public static let agentRecheckInterval: Double? = 0

    public static func make(_ context: StoreContext) -> any SecretStore {
        EncryptedFileStore()
    }
}
