import CCryptoLoader
import COpenSSL

/// An OpenSSL public key (`EVP_PKEY`) and its reusable verification contexts.
///
/// Immutable after creation and freed when the last ``JWK`` holding it goes away. OpenSSL
/// allows one `EVP_PKEY` to be used from several threads as long as each operation has its
/// own context, which ``OpenSSLContextPool`` guarantees: hence `@unchecked Sendable`.
final class PublicKey: @unchecked Sendable {
    enum Kind: Sendable, Equatable {
        case rsa(modulusLength: Int)
        case ec(ECCurve)
        case ed25519
    }

    let kind: Kind
    private let pkey: OpaquePointer
    /// One pool per algorithm the key can serve (six for an RSA key without `alg`, one otherwise).
    private let pools: [(algorithm: JWSAlgorithm, pool: OpenSSLContextPool)]

    private init(pkey: OpaquePointer, kind: Kind, algorithms: [JWSAlgorithm]) {
        self.pkey = pkey
        self.kind = kind
        var pools: [(algorithm: JWSAlgorithm, pool: OpenSSLContextPool)] = []
        for algorithm in algorithms {
            let pool: OpenSSLContextPool
            if algorithm == .edDSA {
                pool = OpenSSLContextPool(destroy: { context in ak_EVP_MD_CTX_free(context) })
            } else {
                pool = OpenSSLContextPool(destroy: { context in ak_EVP_PKEY_CTX_free(context) })
            }
            pools.append((algorithm, pool))
        }
        self.pools = pools
    }

    deinit {
        ak_EVP_PKEY_free(pkey)
    }

    /// Why OpenSSL would not build a key.
    enum BuildFailure: Error {
        case rejected(KeyRejection)
    }

    // MARK: Building keys

    /// An RSA public key from its big-endian modulus and exponent (already range-checked).
    static func rsa(modulus: [UInt8], exponent: [UInt8], algorithms: [JWSAlgorithm]) throws(BuildFailure) -> PublicKey {
        var nLittleEndian = Array(modulus.reversed())
        var eLittleEndian = Array(exponent.reversed())
        let pkey = nLittleEndian.withUnsafeMutableBytes { n in
            eLittleEndian.withUnsafeMutableBytes { e in
                var params = [
                    ak_OSSL_PARAM_construct_BN(cString("n"), n.baseAddress?.assumingMemoryBound(to: UInt8.self), n.count),
                    ak_OSSL_PARAM_construct_BN(cString("e"), e.baseAddress?.assumingMemoryBound(to: UInt8.self), e.count),
                    ak_OSSL_PARAM_construct_end(),
                ]
                return fromData(type: "RSA", params: &params)
            }
        }
        guard let pkey else { throw .rejected(.notLoadable) }
        return PublicKey(pkey: pkey, kind: .rsa(modulusLength: modulus.count), algorithms: algorithms)
    }

    /// An EC public key from its affine coordinates, each exactly the curve's length. The point
    /// is checked to be on the curve and not the point at infinity.
    static func ec(curve: ECCurve, x: [UInt8], y: [UInt8]) throws(BuildFailure) -> PublicKey {
        var point = [0x04] + x + y  // SEC 1 uncompressed encoding
        let pkey = point.withUnsafeMutableBytes { point in
            var params = [
                ak_OSSL_PARAM_construct_utf8_string(
                    cString("group"), UnsafeMutablePointer(mutating: cString(curve.groupName)), 0),
                ak_OSSL_PARAM_construct_octet_string(cString("pub"), point.baseAddress, point.count),
                ak_OSSL_PARAM_construct_end(),
            ]
            return fromData(type: "EC", params: &params)
        }
        guard let pkey else { throw .rejected(.pointNotOnCurve) }
        // fromdata decodes the point; the public check makes sure it lies on the curve and has
        // the group's order, whatever OpenSSL's decoder does or does not check.
        guard let checker = ak_EVP_PKEY_CTX_new_from_pkey(nil, pkey, nil) else {
            ak_EVP_PKEY_free(pkey)
            throw .rejected(.notLoadable)
        }
        let onCurve = ak_EVP_PKEY_public_check(checker) == 1
        ak_EVP_PKEY_CTX_free(checker)
        guard onCurve else {
            ak_ERR_clear_error()
            ak_EVP_PKEY_free(pkey)
            throw .rejected(.pointNotOnCurve)
        }
        return PublicKey(pkey: pkey, kind: .ec(curve), algorithms: [curve.algorithm])
    }

    /// An Ed25519 public key from its 32-byte encoding.
    static func ed25519(_ x: [UInt8]) throws(BuildFailure) -> PublicKey {
        guard let pkey = ak_EVP_PKEY_new_raw_public_key_ex(nil, "ED25519", nil, x, x.count) else {
            ak_ERR_clear_error()
            throw .rejected(.notLoadable)
        }
        return PublicKey(pkey: pkey, kind: .ed25519, algorithms: [.edDSA])
    }

    private static func fromData(type: String, params: inout [OSSL_PARAM]) -> OpaquePointer? {
        guard let context = ak_EVP_PKEY_CTX_new_from_name(nil, type, nil) else { return nil }
        defer { ak_EVP_PKEY_CTX_free(context) }
        var pkey: OpaquePointer?
        guard ak_EVP_PKEY_fromdata_init(context) == 1,
            ak_EVP_PKEY_fromdata(context, &pkey, authkit_evp_pkey_public_key_selection(), &params) == 1
        else {
            ak_ERR_clear_error()
            return nil
        }
        return pkey
    }

    /// A C string with static storage: `OSSL_PARAM` keeps the pointer, so it must outlive the call.
    private static func cString(_ string: StaticString) -> UnsafePointer<CChar> {
        UnsafeRawPointer(string.utf8Start).assumingMemoryBound(to: CChar.self)
    }

    // MARK: Verifying

    /// Verifies an RSA (PKCS#1 v1.5 or PSS) or DER-encoded ECDSA `signature` over `digest`.
    func verify(_ algorithm: JWSAlgorithm, signature: UnsafeRawBufferPointer, digest: UnsafeRawBufferPointer) -> Bool {
        guard let pool = pool(for: algorithm) else { return false }
        let verified = pool.withContext(make: { makePKeyContext(for: algorithm) }) { context in
            ak_EVP_PKEY_verify(
                context, signature.baseAddress?.assumingMemoryBound(to: UInt8.self), signature.count,
                digest.baseAddress?.assumingMemoryBound(to: UInt8.self), digest.count) == 1
        }
        if verified != true { ak_ERR_clear_error() }
        return verified == true
    }

    /// Verifies an Ed25519 `signature` over `message` (EdDSA hashes the message itself).
    func verifyEdDSA(signature: UnsafeRawBufferPointer, message: UnsafeRawBufferPointer) -> Bool {
        guard let pool = pool(for: .edDSA) else { return false }
        let verified = pool.withContext(make: makeDigestContext) { context in
            ak_EVP_DigestVerify(
                context, signature.baseAddress?.assumingMemoryBound(to: UInt8.self), signature.count,
                message.baseAddress?.assumingMemoryBound(to: UInt8.self), message.count) == 1
        }
        if verified != true { ak_ERR_clear_error() }
        return verified == true
    }

    private func pool(for algorithm: JWSAlgorithm) -> OpenSSLContextPool? {
        for entry in pools where entry.algorithm == algorithm { return entry.pool }
        return nil
    }

    private func makePKeyContext(for algorithm: JWSAlgorithm) -> OpaquePointer? {
        guard let digest = algorithm.digest?.md, let context = ak_EVP_PKEY_CTX_new_from_pkey(nil, pkey, nil) else {
            return nil
        }
        var ready = ak_EVP_PKEY_verify_init(context) == 1
        switch algorithm.family {
        case .rsaPKCS1:
            ready = ready && ak_EVP_PKEY_CTX_set_rsa_padding(context, RSA_PKCS1_PADDING) == 1
        case .rsaPSS:
            // RFC 7518 §3.5: MGF1 with the same hash, salt as long as the hash.
            ready =
                ready && ak_EVP_PKEY_CTX_set_rsa_padding(context, RSA_PKCS1_PSS_PADDING) == 1
                && ak_EVP_PKEY_CTX_set_rsa_mgf1_md(context, digest) == 1
                && ak_EVP_PKEY_CTX_set_rsa_pss_saltlen(context, RSA_PSS_SALTLEN_DIGEST) == 1
        case .ecdsa, .eddsa:
            break
        }
        ready = ready && ak_EVP_PKEY_CTX_set_signature_md(context, digest) == 1
        guard ready else {
            ak_EVP_PKEY_CTX_free(context)
            ak_ERR_clear_error()
            return nil
        }
        return context
    }

    private func makeDigestContext() -> OpaquePointer? {
        guard let context = ak_EVP_MD_CTX_new() else { return nil }
        guard ak_EVP_DigestVerifyInit_ex(context, nil, nil, nil, nil, pkey, nil) == 1 else {
            ak_EVP_MD_CTX_free(context)
            ak_ERR_clear_error()
            return nil
        }
        return context
    }
}
