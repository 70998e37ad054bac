import CCryptoLoader
import COpenSSL

/// The X25519 function (RFC 7748) through OpenSSL's EVP_PKEY: public keys from scalars, and
/// shared secrets.
package enum X25519 {
    package static let keyLength = 32

    /// The public key (scalar × base point) of a 32-byte `scalar`.
    package static func publicKey(of scalar: SecretBytes) throws(AgeError) -> [UInt8] {
        let key = try privateKey(scalar)
        defer { ak_EVP_PKEY_free(key) }
        var point = [UInt8](repeating: 0, count: keyLength)
        var length = keyLength
        guard ak_EVP_PKEY_get_raw_public_key(key, &point, &length) == 1, length == keyLength else {
            throw .cryptoFailure("X25519 public key derivation failed")
        }
        return point
    }

    /// X25519(`scalar`, `point`), or `nil` when the result is all zeros (`point` of low order:
    /// C2SP age, "X25519 recipient type", requires refusing it). OpenSSL refuses those too.
    package static func sharedSecret(_ scalar: SecretBytes, _ point: [UInt8]) throws(AgeError) -> SecretBytes? {
        guard point.count == keyLength else { return nil }
        let key = try privateKey(scalar)
        defer { ak_EVP_PKEY_free(key) }
        guard let peer = ak_EVP_PKEY_new_raw_public_key_ex(nil, "X25519", nil, point, keyLength) else {
            throw .cryptoFailure("OpenSSL refused an X25519 public key")
        }
        defer { ak_EVP_PKEY_free(peer) }
        guard let context = ak_EVP_PKEY_CTX_new_from_pkey(nil, key, nil) else {
            throw .cryptoFailure("OpenSSL cannot make an X25519 context")
        }
        defer { ak_EVP_PKEY_CTX_free(context) }
        guard ak_EVP_PKEY_derive_init(context) == 1, ak_EVP_PKEY_derive_set_peer(context, peer) == 1 else {
            throw .cryptoFailure("X25519 could not be set up")
        }
        let secret = SecretBytes(count: keyLength) { output in
            var length = keyLength
            return ak_EVP_PKEY_derive(context, output.baseAddress?.assumingMemoryBound(to: UInt8.self), &length) == 1 && length == keyLength
        }
        // OpenSSL fails the derivation when the result is all zeros; check again regardless.
        guard let secret, try !secret.withUnsafeBytes({ $0.allSatisfy { $0 == 0 } }) else { return nil }
        return secret
    }

    private static func privateKey(_ scalar: SecretBytes) throws(AgeError) -> OpaquePointer {
        try AgeCrypto.requireLoaded()
        guard scalar.count == keyLength else { throw .cryptoFailure("an X25519 scalar is 32 bytes") }
        let key = try scalar.withUnsafeBytes { bytes in
            ak_EVP_PKEY_new_raw_private_key_ex(nil, "X25519", nil, bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), keyLength)
        }
        guard let key else { throw .cryptoFailure("OpenSSL refused an X25519 private key") }
        return key
    }
}
