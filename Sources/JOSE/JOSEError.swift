/// Everything that can go wrong while parsing or verifying a JWS, a JWK set or an id_token.
///
/// Each case says what failed; ``description`` says it in a sentence a user can act on.
/// Descriptions never contain token contents: no claim values, no signature, no payload.
/// Values the caller supplied (the configured issuer, the client id) and short identifiers
/// from a header (an algorithm name, a key id, cleaned by ``JOSEError/printable(_:)``) may be
/// named, because they are needed to act and carry no secret.
public enum JOSEError: Error, Sendable, Equatable, CustomStringConvertible {
    // MARK: Malformed input

    /// The token is longer than ``CompactJWS/maximumTokenSize`` bytes.
    case tokenTooLarge(limit: Int)
    /// The token is not a well-formed compact JWS; the reason is authkit's own text.
    case malformedToken(String)
    /// The token uses the JWS JSON serialization; only the compact form is accepted.
    case jsonSerializationUnsupported
    /// The token has five parts: it is an encrypted JWE, which authkit does not decrypt.
    case encryptedTokenUnsupported
    /// The header sets `b64` to false (RFC 7797 unencoded payload), which authkit refuses.
    case unencodedPayloadUnsupported
    /// The header's `crit` names an extension authkit does not implement.
    case unknownCriticalHeader(String)
    /// A JSON document is not strict RFC 8259 JSON (or exceeds the size or depth limits); the
    /// reason is ``JSONError/reason``.
    case invalidJSON(String)
    /// A value is not strict base64url (padding, whitespace, foreign characters, stray bits).
    case invalidBase64URL
    /// The claims of an id_token are not a JSON object, or a claim has the wrong type.
    case invalidClaim(String)

    // MARK: Signature and key

    /// The header names `none` or an HMAC algorithm: never accepted for id_tokens.
    case forbiddenAlgorithm(String)
    /// The header names an algorithm authkit does not implement.
    case unsupportedAlgorithm(String)
    /// The algorithm is implemented but not in the caller's allowlist.
    case algorithmNotAllowed(JWSAlgorithm, allowed: [JWSAlgorithm])
    /// The key the header selects cannot be used with the header's algorithm.
    case algorithmKeyMismatch(JWSAlgorithm, keyID: String?)
    /// The header's `kid` is not in the key set. The caller may refetch the JWKS once.
    case unknownKeyID(String)
    /// The header's `kid` names more than one key of the set that can verify the token's
    /// algorithm: which key signed is ambiguous, so authkit refuses rather than try each.
    case ambiguousKeyID(String)
    /// The header's `kid` names a key the key set holds but authkit refused to use.
    case keyNotUsable(keyID: String, reason: KeyRejection)
    /// The header has no `kid` and no key in the set fits the algorithm.
    case noSuitableKey(JWSAlgorithm)
    /// The signature does not verify with the selected key(s).
    case badSignature
    /// A single JWK cannot be used for verification.
    case unusableKey(KeyRejection)
    /// The JWK set as a whole is unusable (not JSON, no `keys` array, too large).
    case invalidKeySet(String)
    /// OpenSSL failed for a reason that is not the input's fault (allocation, provider).
    case cryptoFailure(String)
    /// A signing key cannot be made, read or used (a stored key that does not hold together, a
    /// TPM that is gone); the reason names no secret.
    case signingKey(String)

    // MARK: Claims

    /// A required claim is absent.
    case missingClaim(String)
    /// `iss` does not match the configured issuer (named here, as configured).
    case wrongIssuer(expected: String)
    /// The issuer is a `{tenantid}` template and the token's `tid` is missing or unsafe.
    case invalidTenantID
    /// `aud` does not contain the client id.
    case wrongAudience(expected: String)
    /// `azp` is present (or required by several audiences) and is not the client id.
    case authorizedPartyMismatch(expected: String)
    /// `exp` has passed, by this many seconds (leeway not counted).
    case expired(bySeconds: Int64)
    /// `nbf` is still in the future, by this many seconds (leeway not counted).
    case notYetValid(bySeconds: Int64)
    /// `iat` is in the future, by this many seconds (leeway not counted).
    case issuedInFuture(bySeconds: Int64)
    /// `nonce` is not the one sent with the authorization request.
    case nonceMismatch

    /// What kind of failure this is; `authkit jwt verify` maps it to its exit code.
    public enum Category: Sendable, Equatable {
        /// The input is not a well-formed token (or JSON, or base64url).
        case malformed
        /// The algorithm, the key or the signature was refused.
        case signatureOrKey
        /// The signature is good but a claim was refused.
        case claims
    }

    /// The kind of failure; see ``Category``.
    public var category: Category {
        switch self {
        case .tokenTooLarge, .malformedToken, .jsonSerializationUnsupported, .encryptedTokenUnsupported,
            .unencodedPayloadUnsupported, .unknownCriticalHeader, .invalidJSON, .invalidBase64URL:
            return .malformed
        case .forbiddenAlgorithm, .unsupportedAlgorithm, .algorithmNotAllowed, .algorithmKeyMismatch,
            .unknownKeyID, .ambiguousKeyID, .keyNotUsable, .noSuitableKey, .badSignature, .unusableKey, .invalidKeySet,
            .cryptoFailure, .signingKey:
            return .signatureOrKey
        case .invalidClaim, .missingClaim, .wrongIssuer, .invalidTenantID, .wrongAudience,
            .authorizedPartyMismatch, .expired, .notYetValid, .issuedInFuture, .nonceMismatch:
            return .claims
        }
    }

    /// True when the token names a key the key set does not hold: the provider may have rotated
    /// its keys, so the caller should refetch the JWKS once and retry. No other error means that.
    public var isUnknownKeyID: Bool {
        if case .unknownKeyID = self { return true }
        return false
    }

    public var description: String {
        switch self {
        case .tokenTooLarge(let limit):
            return "the token is longer than \(limit) bytes; authkit refuses it unread"
        case .malformedToken(let reason):
            return "the token is malformed: \(reason)"
        case .jsonSerializationUnsupported:
            return "the token uses the JWS JSON serialization; only compact tokens (header.payload.signature) are accepted"
        case .encryptedTokenUnsupported:
            return "the token is an encrypted JWE (five parts); authkit verifies signed tokens (three parts) only"
        case .unencodedPayloadUnsupported:
            return "the token's header sets b64 to false (unencoded payload, RFC 7797), which authkit refuses"
        case .unknownCriticalHeader(let name):
            return "the token's header marks \(Self.printable(name)) as critical, an extension authkit does not implement"
        case .invalidJSON(let reason):
            return "not valid JSON: \(reason)"
        case .invalidBase64URL:
            return "not strict base64url (no padding, whitespace or characters outside A-Z a-z 0-9 - _ allowed)"
        case .invalidClaim(let reason):
            return "the token's claims are invalid: \(reason)"
        case .forbiddenAlgorithm(let name):
            return
                "the token's algorithm \(Self.printable(name)) is never accepted: \(name == "none" ? "it has no signature" : "HMAC would need a shared secret, not the provider's public key")"
        case .unsupportedAlgorithm(let name):
            return
                "the token's algorithm \(Self.printable(name)) is not one authkit implements (\(JWSAlgorithm.allCases.map(\.rawValue).joined(separator: ", ")))"
        case .algorithmNotAllowed(let algorithm, let allowed):
            let list = allowed.map(\.rawValue).sorted().joined(separator: ", ")
            return
                "the token is signed with \(algorithm.rawValue), which is not in the allowed algorithms (\(list)); allow it only if the provider advertises it"
        case .algorithmKeyMismatch(let algorithm, let keyID):
            return
                "the key \(keyID.map { "with kid \(Self.printable($0))" } ?? "selected") cannot verify \(algorithm.rawValue) signatures (its type, curve or alg differs)"
        case .unknownKeyID(let keyID):
            return
                "the token's key id \(Self.printable(keyID)) is not in the provider's key set; refetch the key set (the provider may have rotated its keys)"
        case .ambiguousKeyID(let keyID):
            return
                "the provider's key set has several keys with the token's key id \(Self.printable(keyID)) for its algorithm; authkit refuses to guess which one signed"
        case .keyNotUsable(let keyID, let reason):
            return "the token's key id \(Self.printable(keyID)) names a key authkit refused: \(reason)"
        case .noSuitableKey(let algorithm):
            return "the token has no key id and no key in the key set can verify \(algorithm.rawValue)"
        case .badSignature:
            return "the signature does not verify with the provider's key"
        case .unusableKey(let reason):
            return "the key cannot be used for verification: \(reason)"
        case .invalidKeySet(let reason):
            return "the key set is unusable: \(reason)"
        case .cryptoFailure(let reason):
            return "OpenSSL failed: \(reason)"
        case .signingKey(let reason):
            return "the signing key cannot be used: \(reason)"
        case .missingClaim(let name):
            return "the token has no \(name) claim, which an id_token must carry"
        case .wrongIssuer(let expected):
            return "the token was not issued by \(expected); check the configured issuer"
        case .invalidTenantID:
            return "the issuer is a {tenantid} template but the token's tid claim is missing or not a plain tenant id"
        case .wrongAudience(let expected):
            return "the token is not meant for client id \(expected) (aud); check the configured client id"
        case .authorizedPartyMismatch(let expected):
            return "the token's authorized party (azp) is not client id \(expected)"
        case .expired(let seconds):
            return "the token expired \(seconds) s ago; sign in again, or check this machine's clock"
        case .notYetValid(let seconds):
            return "the token is not valid for another \(seconds) s (nbf); check this machine's clock"
        case .issuedInFuture(let seconds):
            return "the token was issued \(seconds) s in the future (iat); check this machine's clock"
        case .nonceMismatch:
            return "the token's nonce is not the one sent with the sign-in request (a replayed or foreign token)"
        }
    }

    /// `value` when it is a short identifier of printable ASCII, quoted; otherwise a neutral
    /// stand-in. Header values are attacker-chosen: they must not reach a terminal raw.
    public static func printable(_ value: String) -> String {
        let allowed =
            value.utf8.count <= 64 && !value.isEmpty
            && value.utf8.allSatisfy { byte in
                byte > 0x20 && byte < 0x7F && byte != UInt8(ascii: "\"") && byte != UInt8(ascii: "\\")
            }
        return allowed ? "\"\(value)\"" : "(unprintable value)"
    }
}

extension JOSEError {
    /// A strict-JSON failure as JOSE reports it: ``invalidJSON(_:)`` with the same reason and
    /// byte offset (never content).
    init(_ error: JSONError) {
        self = .invalidJSON(error.reason)
    }
}
