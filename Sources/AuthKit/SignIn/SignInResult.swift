import SecretStore

/// Who signed in, where the tokens went, and which scopes were granted.
public struct SignInResult: Sendable {
    /// Who signed in.
    public var account: Account
    /// Where the sign-in was stored.
    public var location: StorageLocation
    /// The scopes the provider granted.
    public var grantedScopes: [String]
}
