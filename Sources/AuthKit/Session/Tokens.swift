#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// An access token to send as `Authorization: Bearer …`, or — when ``tokenType`` is `DPoP` —
/// as `Authorization: DPoP …` with a proof (``SharedSession/send(_:account:scopes:resources:)`` does
/// both). The value is a secret: the description shows only its expiry and scopes.
public struct AccessToken: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The token itself: send it as `Authorization: Bearer …`; never print or log it.
    public let value: String
    /// When the provider said it expires.
    public let expiresAt: Date
    /// The scopes it carries.
    public let scopes: [String]
    /// The account it belongs to.
    public let account: String
    /// True when this call refreshed it.
    public let refreshed: Bool
    /// `Bearer`, or `DPoP` for a token bound to the sign-in's key (RFC 9449): a server that
    /// checks the binding takes it only with a proof.
    public internal(set) var tokenType: String = "Bearer"
    /// The resources (RFC 8707) the token was issued for, when it was narrowed to some.
    public internal(set) var resources: [String] = []

    public var description: String {
        "\(tokenType == "DPoP" ? "DPoP " : "")AccessToken(\(account), expires \(Int(clamping: expiresAt.timeIntervalSince1970)), scopes \(scopes.joined(separator: " ")))"
    }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: ["account": account, "expiresAt": expiresAt]) }
}

/// A verified id_token handed to a client that authenticates with one (a Kubernetes API server
/// configured with `--oidc-issuer-url`). The value is a secret: the description shows none.
public struct IDToken: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The id_token itself; never print or log it.
    public let value: String
    /// Its `exp`.
    public let expiresAt: Date
    /// The account it belongs to.
    public let account: String
    /// True when this call refreshed the sign-in to get it.
    public let refreshed: Bool

    public var description: String { "IDToken(\(account), expires \(Int(clamping: expiresAt.timeIntervalSince1970)))" }
    public var debugDescription: String { description }
}
