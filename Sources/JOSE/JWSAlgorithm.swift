/// The JWS signature algorithms authkit verifies (RFC 7518 §3, RFC 8037 §3.1).
///
/// Deliberately absent: `none` (no signature) and `HS256`/`HS384`/`HS512` (a shared secret,
/// which a provider's public key set cannot be), both refused with
/// ``JOSEError/forbiddenAlgorithm(_:)``.
public enum JWSAlgorithm: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// RSASSA-PKCS1-v1_5 with SHA-256.
    case rs256 = "RS256"
    /// RSASSA-PKCS1-v1_5 with SHA-384.
    case rs384 = "RS384"
    /// RSASSA-PKCS1-v1_5 with SHA-512.
    case rs512 = "RS512"
    /// RSASSA-PSS with SHA-256, MGF1 with SHA-256, salt of 32 bytes.
    case ps256 = "PS256"
    /// RSASSA-PSS with SHA-384, MGF1 with SHA-384, salt of 48 bytes.
    case ps384 = "PS384"
    /// RSASSA-PSS with SHA-512, MGF1 with SHA-512, salt of 64 bytes.
    case ps512 = "PS512"
    /// ECDSA on P-256 with SHA-256.
    case es256 = "ES256"
    /// ECDSA on P-384 with SHA-384.
    case es384 = "ES384"
    /// ECDSA on P-521 with SHA-512.
    case es512 = "ES512"
    /// EdDSA; authkit implements the Ed25519 curve.
    case edDSA = "EdDSA"

    public var description: String { rawValue }

    /// The allowlist for a provider: RS256 (which OpenID Connect requires every provider to
    /// support) plus the algorithms its discovery document advertises in
    /// `id_token_signing_alg_values_supported` that authkit implements. `none` and HMAC names
    /// are dropped, as are unknown ones.
    public static func allowlist(advertised names: some Sequence<String>) -> Set<JWSAlgorithm> {
        var allowed: Set<JWSAlgorithm> = [.rs256]
        for name in names {
            if let algorithm = JWSAlgorithm(rawValue: name) { allowed.insert(algorithm) }
        }
        return allowed
    }

    /// Sorts a header's `alg` into implemented, forbidden and unknown.
    static func classify(_ name: String) throws(JOSEError) -> JWSAlgorithm {
        if let algorithm = JWSAlgorithm(rawValue: name) { return algorithm }
        switch name {
        case "none", "HS256", "HS384", "HS512": throw .forbiddenAlgorithm(name)
        default: throw .unsupportedAlgorithm(name)
        }
    }

    enum Family {
        case rsaPKCS1, rsaPSS, ecdsa, eddsa
    }

    var family: Family {
        switch self {
        case .rs256, .rs384, .rs512: return .rsaPKCS1
        case .ps256, .ps384, .ps512: return .rsaPSS
        case .es256, .es384, .es512: return .ecdsa
        case .edDSA: return .eddsa
        }
    }

    /// The hash the signature covers; `nil` for EdDSA, which hashes inside the algorithm.
    var digest: Digest? {
        switch self {
        case .rs256, .ps256, .es256: return .sha256
        case .rs384, .ps384, .es384: return .sha384
        case .rs512, .ps512, .es512: return .sha512
        case .edDSA: return nil
        }
    }

    /// The curve an ECDSA algorithm is bound to (RFC 7518 §3.4).
    var curve: ECCurve? {
        switch self {
        case .es256: return .p256
        case .es384: return .p384
        case .es512: return .p521
        default: return nil
        }
    }
}
