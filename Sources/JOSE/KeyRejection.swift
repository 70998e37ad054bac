/// Why a JWK cannot be used to verify signatures.
///
/// A key set keeps its usable keys and lists the others with one of these reasons
/// (``JWKSet/skipped``); one bad key never makes the whole set unusable.
public enum KeyRejection: Error, Sendable, Equatable, CustomStringConvertible {
    /// The entry of `keys` is not a JSON object.
    case notAnObject
    /// A member has the wrong JSON type or is not strict base64url (named).
    case malformedMember(String)
    /// `kty` is absent.
    case missingKeyType
    /// `kty` is `oct`: a shared secret, which can never verify a provider's signature.
    case symmetricKey
    /// `kty` is something other than `RSA`, `EC` or `OKP`.
    case unsupportedKeyType(String)
    /// Private key members (`d`, `p`, `q`, `dp`, `dq`, `qi`, `oth`, `k`) are present.
    case privateKeyMaterial
    /// `use` is not `sig`.
    case notForSignatures
    /// `key_ops` is present and does not contain `verify`.
    case verifyNotPermitted
    /// `alg` names something other than a signature algorithm authkit implements.
    case unsupportedAlgorithm(String)
    /// `alg` names an algorithm that does not fit the key's type or curve.
    case algorithmMismatch(JWSAlgorithm)
    /// The RSA modulus has fewer than 2048 bits.
    case rsaModulusTooSmall(bits: Int)
    /// The RSA modulus has more than 16384 bits (verification would be needlessly slow).
    case rsaModulusTooLarge(bits: Int)
    /// The RSA public exponent is 1, even, or longer than 64 bits.
    case rsaExponentInvalid
    /// The RSA modulus is even: it cannot be a product of two odd primes.
    case rsaModulusInvalid
    /// The RSA modulus has the fingerprint of the Infineon ROCA flaw (CVE-2017-15361): its
    /// private key can be computed from the public key.
    case rsaROCAVulnerable
    /// The curve is not P-256, P-384, P-521 (EC) or Ed25519 (OKP).
    case unsupportedCurve(String)
    /// A coordinate or public key does not have exactly the curve's length.
    case wrongCoordinateLength(String)
    /// The point is not on the curve (or is the point at infinity).
    case pointNotOnCurve
    /// OpenSSL would not load the key material.
    case notLoadable
    /// The set holds more keys than ``JWKSet/maximumKeyCount``; the rest are ignored.
    case tooManyKeys

    public var description: String {
        switch self {
        case .notAnObject: return "the entry is not a JSON object"
        case .malformedMember(let name): return "its \(name) member is malformed"
        case .missingKeyType: return "it has no kty"
        case .symmetricKey: return "it is a symmetric (oct) key, never used to verify a provider's signature"
        case .unsupportedKeyType(let kty): return "its key type \(JOSEError.printable(kty)) is not RSA, EC or OKP"
        case .privateKeyMaterial: return "it contains private key material, which a published key set must not"
        case .notForSignatures: return "its use is not sig"
        case .verifyNotPermitted: return "its key_ops do not include verify"
        case .unsupportedAlgorithm(let alg): return "its alg \(JOSEError.printable(alg)) is not a signature algorithm authkit implements"
        case .algorithmMismatch(let alg): return "its alg \(alg.rawValue) does not fit its key type or curve"
        case .rsaModulusTooSmall(let bits): return "its RSA modulus has \(bits) bits, fewer than the 2048 required"
        case .rsaModulusTooLarge(let bits): return "its RSA modulus has \(bits) bits, more than the 16384 accepted"
        case .rsaExponentInvalid: return "its RSA public exponent is 1, even or too long"
        case .rsaModulusInvalid: return "its RSA modulus is even"
        case .rsaROCAVulnerable: return "its RSA modulus has the ROCA fingerprint (CVE-2017-15361): the private key can be recovered"
        case .unsupportedCurve(let crv): return "its curve \(JOSEError.printable(crv)) is not P-256, P-384, P-521 or Ed25519"
        case .wrongCoordinateLength(let name): return "its \(name) does not have the curve's exact length"
        case .pointNotOnCurve: return "its point is not on the curve"
        case .notLoadable: return "OpenSSL could not load it"
        case .tooManyKeys: return "the key set holds more than \(JWKSet.maximumKeyCount) keys"
        }
    }
}
