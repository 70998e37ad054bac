import SecretStore

/// Who signed in, where the tokens went, and which scopes were granted.
public struct SignInResult: Sendable {
    /// Who signed in.
    public var account: Account
    /// Where the sign-in was stored.
    public var location: StorageLocation
    /// The scopes the provider granted.
    public var grantedScopes: [String]
    /// What did not stop the sign-in but a person should know (a note that could not be kept),
    /// one sentence each.
    public var warnings: [String] = []
}
