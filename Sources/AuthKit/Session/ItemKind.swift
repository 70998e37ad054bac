/// What an item of a group holds, as its `kind` attribute names it in every store: the
/// sign-in's record, the mark of the group's current account, or AWS credentials derived from
/// the sign-in. Each owner builds and parses its own kind (``AWSCredentialCache/Key``); a kind
/// nobody here knows parses to nil and is left alone.
package enum ItemKind: Sendable, Equatable {
    /// An account's sign-in (``TokenRecord``).
    case tokens
    /// The group's current account (``SharedSession/useAccount(_:)``): a mark without a secret.
    case currentAccount
    /// STS credentials made from the sign-in for one role (``AWSCredentialCache``).
    case awsCredentials(AWSCredentialCache.Key)
    /// The key a DPoP sign-in's tokens are bound to (``DPoPKey``): never in the item of the
    /// refresh token.
    case dpopKey

    /// The `kind` attribute.
    package var stored: String {
        switch self {
        case .tokens: "tokens"
        case .currentAccount: "current-account"
        case .awsCredentials(let key): key.stored
        case .dpopKey: "dpop-key"
        }
    }

    package init?(stored: String) {
        switch stored {
        case "tokens": self = .tokens
        case "current-account": self = .currentAccount
        case "dpop-key": self = .dpopKey
        default:
            guard let key = AWSCredentialCache.Key(stored: stored) else { return nil }
            self = .awsCredentials(key)
        }
    }

    /// Kept beside a sign-in and made from it: it goes when the sign-in goes.
    var isDerived: Bool { self != .tokens }
}
