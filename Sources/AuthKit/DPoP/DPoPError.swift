/// Why a sign-in bound to a key (DPoP, RFC 9449) could not make or use its proof. No case
/// carries a token, a proof or a key.
public enum DPoPError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The key could not be made, read or used (the TPM is gone or refuses, the stored key does
    /// not hold together).
    case keyUnavailable(String)
    /// The sign-in is bound to a key that is not in the store beside it.
    case keyMissing(account: String)
    /// The stored key is another key than the one the sign-in is bound to.
    case keyMismatch(account: String)
    /// `dpop = always` for a provider that takes no ES256 proofs.
    case notOffered(String)
    /// The provider refused a proof (`invalid_dpop_proof`); its cleaned description.
    case proofRefused(String?)
    /// The request cannot carry a proof (a URL or method a proof cannot name).
    case invalidRequest(String)

    public var description: String {
        switch self {
        case .keyUnavailable(let reason):
            return "the sign-in's DPoP key cannot be used: \(reason)"
        case .keyMissing(let account):
            return "the sign-in of \(account) is bound to a DPoP key that is not in the store beside it; "
                + "its tokens are useless without it — sign in again"
        case .keyMismatch(let account):
            return "the DPoP key stored for \(account) is not the key the sign-in is bound to (changed in the store?); "
                + "it was left in place — sign in again"
        case .notOffered(let reason):
            return "DPoP was asked for (dpop = always) but \(reason)"
        case .proofRefused(let description):
            return "the provider refused the DPoP proof (invalid_dpop_proof\(description.map { ": \($0)" } ?? ""))"
                + " — check this machine's clock"
        case .invalidRequest(let reason):
            return reason
        }
    }
}
