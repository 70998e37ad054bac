#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Validates an OpenID Connect id_token: its signature against the provider's keys, then its
/// claims (OpenID Connect Core 1.0 §3.1.3.7).
///
/// Claim checks, in order, each a distinct ``JOSEError``:
/// - `iss` matches ``issuer`` (exactly, or through a `{tenantid}` template filled from `tid`);
/// - `sub` is a non-empty string;
/// - `aud` (a string or an array of strings) contains ``clientID``;
/// - `azp`, required when `aud` has several values, equals ``clientID`` when present;
/// - `exp` is present and now < `exp` + ``leeway``;
/// - `iat` is present and ≤ now + ``leeway``;
/// - `nbf`, when present, is ≤ now + ``leeway``;
/// - `nonce` equals the expected nonce, when one was sent.
///
/// "Now" comes from ``clock``, which tests and `authkit jwt verify --now` pin.
public struct IDTokenValidator: Sendable {
    /// What `iss` must be.
    public var issuer: IssuerRule
    /// The client id, which `aud` must contain.
    public var clientID: String
    /// The signature algorithms accepted.
    public var allowedAlgorithms: Set<JWSAlgorithm>
    /// How far clocks may disagree, applied to `exp`, `nbf` and `iat`.
    public var leeway: Duration
    /// The current time.
    public var clock: @Sendable () -> Date

    /// The default leeway, 120 s.
    public static let defaultLeeway: Duration = .seconds(120)

    /// A validator for tokens of `issuer` meant for `clientID`.
    ///
    /// - Parameters:
    ///   - allowedAlgorithms: RS256 by default; pass ``JWSAlgorithm/allowlist(advertised:)``
    ///     of the provider's `id_token_signing_alg_values_supported` to accept what it advertises.
    ///   - leeway: allowed clock skew, 120 s by default.
    ///   - clock: the current time; the system clock by default.
    public init(
        issuer: IssuerRule,
        clientID: String,
        allowedAlgorithms: Set<JWSAlgorithm> = [.rs256],
        leeway: Duration = IDTokenValidator.defaultLeeway,
        clock: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.issuer = issuer
        self.clientID = clientID
        self.allowedAlgorithms = allowedAlgorithms
        self.leeway = leeway
        self.clock = clock
    }

    /// Verifies the signature of `token` with `keys`, then its claims. `nonce` is the nonce sent
    /// with the authorization request, or `nil` when none was sent.
    public func validate(_ token: some StringProtocol, keys: JWKSet, nonce: String?) throws(JOSEError) -> ValidatedIDToken {
        try validate(try CompactJWS(parsing: token), keys: keys, nonce: nonce)
    }

    /// Verifies the signature of a parsed token, then its claims; see ``validate(_:keys:nonce:)-(StringProtocol,_,_)``.
    public func validate(_ jws: CompactJWS, keys: JWKSet, nonce: String?) throws(JOSEError) -> ValidatedIDToken {
        let verified = try verifySignature(jws, keys: keys)
        let claims = try JWTClaims(payload: verified.payload)
        try validateClaims(claims, nonce: nonce)
        return ValidatedIDToken(header: verified.header, claims: claims, algorithm: verified.algorithm, key: verified.key)
    }

    /// Verifies the signature only: the JWS and key rules, no claims (for tokens that are not
    /// id_tokens, or to inspect one).
    public func verifySignature(_ token: some StringProtocol, keys: JWKSet) throws(JOSEError) -> VerifiedJWS {
        try verifySignature(try CompactJWS(parsing: token), keys: keys)
    }

    /// Verifies the signature of a parsed token only; see ``verifySignature(_:keys:)-(StringProtocol,_)``.
    public func verifySignature(_ jws: CompactJWS, keys: JWKSet) throws(JOSEError) -> VerifiedJWS {
        try JWSVerifier(allowedAlgorithms: allowedAlgorithms).verify(jws, keys: keys)
    }

    /// Checks the claims of an id_token whose signature has been verified.
    public func validateClaims(_ claims: JWTClaims, nonce expectedNonce: String?) throws(JOSEError) {
        let json = claims.json

        let issued = try requiredString(json, "iss")
        try issuer.check(issuer: issued, tenantID: json["tid"]?.stringValue)

        let subject = try requiredString(json, "sub")
        guard !subject.isEmpty else { throw .invalidClaim("sub is empty") }

        guard let audienceValue = json["aud"] else { throw .missingClaim("aud") }
        let audience: [String]
        switch audienceValue {
        case .string(let single):
            audience = [single]
        case .array(let list):
            var strings: [String] = []
            for element in list {
                guard let string = element.stringValue else { throw .invalidClaim("aud holds a value that is not a string") }
                strings.append(string)
            }
            audience = strings
        default:
            throw .invalidClaim("aud is not a string or an array of strings")
        }
        guard audience.contains(clientID) else { throw .wrongAudience(expected: clientID) }

        if let azpValue = json["azp"] {
            guard let azp = azpValue.stringValue else { throw .invalidClaim("azp is not a string") }
            guard azp == clientID else { throw .authorizedPartyMismatch(expected: clientID) }
        } else if audience.count > 1 {
            throw .missingClaim("azp")
        }

        let now = clock().timeIntervalSince1970
        let leewaySeconds = Double(leeway.components.seconds) + Double(leeway.components.attoseconds) * 1e-18

        let expiration = try requiredNumericDate(json, "exp")
        if now >= expiration + leewaySeconds {
            throw .expired(bySeconds: IDTokenValidator.wholeSeconds(now - expiration))
        }
        let issuedAt = try requiredNumericDate(json, "iat")
        if issuedAt > now + leewaySeconds {
            throw .issuedInFuture(bySeconds: IDTokenValidator.wholeSeconds(issuedAt - now))
        }
        if json["nbf"] != nil {
            let notBefore = try requiredNumericDate(json, "nbf")
            if notBefore > now + leewaySeconds {
                throw .notYetValid(bySeconds: IDTokenValidator.wholeSeconds(notBefore - now))
            }
        }

        if let expectedNonce {
            guard let nonceValue = json["nonce"] else { throw .missingClaim("nonce") }
            guard let nonce = nonceValue.stringValue else { throw .invalidClaim("nonce is not a string") }
            guard IDTokenValidator.constantTimeEqual(nonce, expectedNonce) else { throw .nonceMismatch }
        }
    }

    private func requiredString(_ json: JSONObject, _ name: String) throws(JOSEError) -> String {
        guard let value = json[name] else { throw .missingClaim(name) }
        guard let string = value.stringValue else { throw .invalidClaim("\(name) is not a string") }
        return string
    }

    /// A NumericDate (RFC 7519 §2): a JSON number of seconds since 1970, possibly fractional.
    private func requiredNumericDate(_ json: JSONObject, _ name: String) throws(JOSEError) -> Double {
        guard let value = json[name] else { throw .missingClaim(name) }
        guard let seconds = value.doubleValue, seconds.isFinite else {
            throw .invalidClaim("\(name) is not a NumericDate")
        }
        return seconds
    }

    private static func wholeSeconds(_ seconds: Double) -> Int64 {
        seconds >= 9.0e18 ? Int64.max : Int64(seconds.rounded(.down))
    }

    /// Compares without stopping at the first difference, so timing does not reveal how much
    /// of a guessed nonce was right.
    private static func constantTimeEqual(_ lhs: String, _ rhs: String) -> Bool {
        let a = Array(lhs.utf8), b = Array(rhs.utf8)
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for index in 0..<a.count { difference |= a[index] ^ b[index] }
        return difference == 0
    }
}

/// An id_token whose signature and claims have been validated.
public struct ValidatedIDToken: Sendable {
    /// The protected header.
    public let header: JOSEHeader
    /// The claims.
    public let claims: JWTClaims
    /// The algorithm that verified the signature.
    public let algorithm: JWSAlgorithm
    /// The key that verified the signature.
    public let key: JWK
}
