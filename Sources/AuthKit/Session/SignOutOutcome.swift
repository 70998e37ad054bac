extension SharedSession {
    /// The outcome of signing one account out (``AuthKit/SignOutOutcome``).
    public typealias SignOutOutcome = AuthKit.SignOutOutcome
}

/// The outcome of signing one account out (``SharedSession/signOut(account:)``).
public struct SignOutOutcome: Sendable {
    /// What became of the refresh token at the provider.
    public enum Revocation: Sendable, Equatable {
        /// Revoked (RFC 7009).
        case revoked
        /// The provider advertises no revocation endpoint, or there was no refresh token.
        case notSupported
        /// Revocation was attempted and failed; the local sign-in is removed all the same.
        case failed(String)
    }

    /// The account signed out.
    public var account: String
    /// What became of its refresh token at the provider.
    public var revocation: Revocation
    /// Whether a stored item was removed.
    public var removed: Bool
    /// The issuer the sign-in was made with, as configured (a `{tenantid}` template stays
    /// one) — what signs in again.
    public var issuer: String
    /// The client id the sign-in was made with.
    public var clientID: String
}
