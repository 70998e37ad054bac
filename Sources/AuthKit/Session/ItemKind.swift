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
    /// The key a DPoP sign-in's tokens are bound to (``DPoPKey``), by its thumbprint: never in
    /// the item of the refresh token, and a new sign-in's key never replaces the one the
    /// stored record names before the new record is stored.
    case dpopKey(thumbprint: String)

    /// The `kind` attribute.
    package var stored: String {
        switch self {
        case .tokens: "tokens"
        case .currentAccount: "current-account"
        case .awsCredentials(let key): key.stored
        case .dpopKey(let thumbprint): "dpop-key " + thumbprint
        }
    }

    package init?(stored: String) {
        switch stored {
        case "tokens": self = .tokens
        case "current-account": self = .currentAccount
        case let kind where kind.hasPrefix("dpop-key "):
            let thumbprint = String(kind.dropFirst("dpop-key ".count))
            guard thumbprint.utf8.count == 43, thumbprint.utf8.allSatisfy({ Base64URLCharacters.contains($0) }) else { return nil }
            self = .dpopKey(thumbprint: thumbprint)
        default:
            guard let key = AWSCredentialCache.Key(stored: stored) else { return nil }
            self = .awsCredentials(key)
        }
    }

    /// Kept beside a sign-in and made from it: it goes when the sign-in goes.
    var isDerived: Bool { self != .tokens }

    /// Whether a stored `kind` is one made from a sign-in: a kind that parses as one, or one
    /// with the prefix of AWS credentials or a DPoP key that does not parse (written by an
    /// older authkit, or damaged), which goes with the sign-in too rather than outlive it.
    static func isDerived(stored: String) -> Bool {
        ItemKind(stored: stored)?.isDerived ?? (stored.hasPrefix("aws-sts ") || stored.hasPrefix("dpop-key "))
    }
}

/// The base64url alphabet (RFC 4648 §5).
private let Base64URLCharacters = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
