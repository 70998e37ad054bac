/// Verifies compact JWS signatures against a ``JWKSet`` (RFC 7515 §5.2, RFC 8725 §3).
///
/// The rules, in order:
/// 1. `alg` must be an algorithm authkit implements — `none` and `HS256`/`HS384`/`HS512` are
///    refused outright (``JOSEError/forbiddenAlgorithm(_:)``) — and must be in
///    ``allowedAlgorithms``.
/// 2. The key comes from the key set only, never from the token (`jwk`, `jku`, `x5u`, `x5c`
///    are ignored). With a `kid`, the key with that `kid` that fits the algorithm is the only
///    candidate; an unknown `kid` is ``JOSEError/unknownKeyID(_:)`` and **never** falls back to
///    another key, and a `kid` that names two keys fitting the algorithm (a set that repeats a
///    `kid`) is ``JOSEError/ambiguousKeyID(_:)``: never "whichever verifies". Without a
///    `kid`, every key that fits the algorithm is a candidate, and each is tried in turn:
///    the token is accepted if one of them verifies it.
/// 3. A candidate must fit the algorithm: its type and curve, and its own `alg` if it has one.
/// 4. The signature must have exactly the length the algorithm and key give it; ECDSA's `r`
///    and `s` must lie in 1 … n−1. Then OpenSSL verifies it.
public struct JWSVerifier: Sendable {
    /// The algorithms accepted; a token signed with another is refused.
    public var allowedAlgorithms: Set<JWSAlgorithm>

    /// A verifier accepting `allowedAlgorithms` (by default RS256 only; see
    /// ``JWSAlgorithm/allowlist(advertised:)`` for a provider's list).
    public init(allowedAlgorithms: Set<JWSAlgorithm> = [.rs256]) {
        self.allowedAlgorithms = allowedAlgorithms
    }

    /// Parses and verifies a compact JWS.
    public func verify(_ token: some StringProtocol, keys: JWKSet) throws(JOSEError) -> VerifiedJWS {
        try verify(try CompactJWS(parsing: token), keys: keys)
    }

    /// Verifies a parsed JWS; returns it with the algorithm and key that verified it.
    public func verify(_ jws: CompactJWS, keys: JWKSet) throws(JOSEError) -> VerifiedJWS {
        let algorithm = try JWSAlgorithm.classify(jws.header.algorithm)
        guard allowedAlgorithms.contains(algorithm) else {
            throw .algorithmNotAllowed(algorithm, allowed: allowedAlgorithms.sorted { $0.rawValue < $1.rawValue })
        }
        try JWSVerifier.checkCandidates(for: jws.header.keyID, algorithm: algorithm, in: keys)
        let keyID = jws.header.keyID
        let candidates = keys.keys.lazy.filter { ($0.keyID == keyID || keyID == nil) && $0.canVerify(algorithm) }
        guard let key = try JWSVerifier.firstVerifyingKey(candidates, algorithm: algorithm, jws: jws) else {
            throw .badSignature
        }
        return VerifiedJWS(header: jws.header, payload: jws.payload, algorithm: algorithm, key: key)
    }

    /// Checks that the `kid` rules above leave at least one key to try, or throws why not.
    private static func checkCandidates(for keyID: String?, algorithm: JWSAlgorithm, in set: JWKSet) throws(JOSEError) {
        guard let keyID else {
            guard set.keys.contains(where: { $0.canVerify(algorithm) }) else { throw .noSuitableKey(algorithm) }
            return
        }
        var named = false
        var fitting = 0
        for key in set.keys where key.keyID == keyID {
            named = true
            if key.canVerify(algorithm) { fitting += 1 }
        }
        if fitting == 1 { return }
        if fitting > 1 { throw .ambiguousKeyID(keyID) }
        guard named else {
            if let skipped = set.skipped.first(where: { $0.keyID == keyID }) {
                throw .keyNotUsable(keyID: keyID, reason: skipped.reason)
            }
            throw .unknownKeyID(keyID)
        }
        throw .algorithmKeyMismatch(algorithm, keyID: keyID)
    }

    /// The first candidate whose signature check succeeds, or `nil`.
    private static func firstVerifyingKey(
        _ candidates: some Sequence<JWK>, algorithm: JWSAlgorithm, jws: CompactJWS
    ) throws(JOSEError) -> JWK? {
        switch algorithm.family {
        case .eddsa:
            guard jws.signature.count == 64 else { return nil }
            return jws.signature.withUnsafeBytes { signature in
                jws.withSigningInput { message in
                    candidates.first { $0.publicKey.verifyEdDSA(signature: signature, message: message) }
                }
            }

        case .ecdsa:
            guard let curve = algorithm.curve,
                let der = jws.signature.withUnsafeBufferPointer({ ECDSASignature.der(fromRaw: $0, curve: curve) })
            else { return nil }
            return try withDigest(of: jws, algorithm) { digest in
                der.withUnsafeBytes { signature in
                    candidates.first { $0.publicKey.verify(algorithm, signature: signature, digest: digest) }
                }
            }

        case .rsaPKCS1, .rsaPSS:
            return try withDigest(of: jws, algorithm) { digest in
                jws.signature.withUnsafeBytes { signature in
                    candidates.first { key in
                        // RFC 8017 §8.2.2 step 1: the signature is exactly k bytes long.
                        guard case .rsa(let modulusLength) = key.publicKey.kind, signature.count == modulusLength else {
                            return false
                        }
                        return key.publicKey.verify(algorithm, signature: signature, digest: digest)
                    }
                }
            }
        }
    }

    /// Hashes the signing input once for all candidates and runs `body` with the digest.
    private static func withDigest<Result>(
        of jws: CompactJWS, _ algorithm: JWSAlgorithm, _ body: (UnsafeRawBufferPointer) -> Result
    ) throws(JOSEError) -> Result {
        guard let digest = algorithm.digest else { throw .cryptoFailure("\(algorithm.rawValue) has no digest") }
        let result: Result? = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 64) { buffer in
            guard let base = buffer.baseAddress,
                jws.withSigningInput({ digest.hash($0, into: base) })
            else { return nil }
            return body(UnsafeRawBufferPointer(start: base, count: digest.length))
        }
        guard let result else { throw .cryptoFailure("hashing with \(algorithm.rawValue) failed") }
        return result
    }
}

/// A JWS whose signature has been verified.
public struct VerifiedJWS: Sendable {
    /// The protected header.
    public let header: JOSEHeader
    /// The payload, now authenticated.
    public let payload: [UInt8]
    /// The algorithm that verified it.
    public let algorithm: JWSAlgorithm
    /// The key that verified it.
    public let key: JWK
}
