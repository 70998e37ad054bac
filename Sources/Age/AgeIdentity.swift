/// What can open an age file: an X25519 identity, or the passphrase of a passphrase-encrypted
/// file.
package enum AgeIdentity: Sendable, CustomStringConvertible {
    case x25519(X25519Identity)
    case passphrase(AgePassphrase)

    package var description: String {
        switch self {
        case .x25519(let identity): return identity.description
        case .passphrase: return "passphrase"
        }
    }
}
