import CCryptoLoader
import COpenSSL

/// The primitives of age other than X25519, ChaCha20-Poly1305 and scrypt, from OpenSSL's
/// libcrypto through CCryptoLoader (opened on first use, never at start-up): random bytes,
/// HKDF-SHA-256 (RFC 5869), HMAC-SHA-256 and SHA-256.
package enum AgeCrypto {
    /// Opens libcrypto if needed; throws naming what is missing when it cannot be loaded.
    package static func requireLoaded() throws(AgeError) {
        var message = [CChar](repeating: 0, count: 256)
        guard ak_crypto_load(&message, message.count) != 0 else { return }
        throw .cryptoFailure(String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }

    /// `count` bytes from OpenSSL's CSPRNG (RAND_bytes).
    package static func randomBytes(_ count: Int) throws(AgeError) -> [UInt8] {
        try requireLoaded()
        var bytes = [UInt8](repeating: 0, count: count)
        guard count == 0 || ak_RAND_bytes(&bytes, Int32(count)) == 1 else { throw .cryptoFailure("no random bytes from OpenSSL") }
        return bytes
    }

    /// Random key material, made in place.
    package static func randomSecret(_ count: Int) throws(AgeError) -> SecretBytes {
        try requireLoaded()
        let secret = SecretBytes(count: count) { buffer in
            guard let base = buffer.baseAddress else { return count == 0 }
            return ak_RAND_bytes(base.assumingMemoryBound(to: UInt8.self), Int32(count)) == 1
        }
        guard let secret else { throw .cryptoFailure("no random bytes from OpenSSL") }
        return secret
    }

    /// HKDF-SHA-256 (RFC 5869) of `ikm` into 32 bytes. An empty `salt` is left out, which
    /// RFC 5869 §2.2 defines as HashLen zero bytes (what age's `nil` salt means).
    package static func hkdf(_ ikm: SecretBytes, salt: [UInt8], info: StaticString) throws(AgeError) -> SecretBytes {
        try requireLoaded()
        guard let kdf = ak_EVP_KDF_fetch(nil, "HKDF", nil) else { throw .cryptoFailure("OpenSSL has no HKDF") }
        defer { ak_EVP_KDF_free(kdf) }
        guard let context = ak_EVP_KDF_CTX_new(kdf) else { throw .cryptoFailure("OpenSSL cannot make an HKDF context") }
        defer { ak_EVP_KDF_CTX_free(context) }
        var salt = salt
        let derived = try ikm.withUnsafeBytes { (key) throws(AgeError) -> SecretBytes? in
            SecretBytes(count: 32) { output in
                salt.withUnsafeMutableBytes { salt in
                    var params = [
                        ak_OSSL_PARAM_construct_utf8_string(cString("digest"), UnsafeMutablePointer(mutating: cString("SHA256")), 0),
                        ak_OSSL_PARAM_construct_octet_string(cString("key"), UnsafeMutableRawPointer(mutating: key.baseAddress), key.count),
                        ak_OSSL_PARAM_construct_octet_string(
                            cString("info"), UnsafeMutableRawPointer(mutating: UnsafeRawPointer(info.utf8Start)), info.utf8CodeUnitCount),
                        ak_OSSL_PARAM_construct_end(),
                    ]
                    if salt.count > 0 {
                        params.insert(ak_OSSL_PARAM_construct_octet_string(cString("salt"), salt.baseAddress, salt.count), at: 3)
                    }
                    return ak_EVP_KDF_derive(context, output.baseAddress?.assumingMemoryBound(to: UInt8.self), 32, &params) == 1
                }
            }
        }
        guard let derived else { throw .cryptoFailure("HKDF-SHA-256 failed") }
        return derived
    }

    /// HMAC-SHA-256 of `data` under `key` (EVP_Q_mac).
    package static func hmacSHA256(key: SecretBytes, _ data: some Collection<UInt8>) throws(AgeError) -> [UInt8] {
        try requireLoaded()
        let message = Array(data)
        var output = [UInt8](repeating: 0, count: 32)
        var length = 0
        let done = try key.withUnsafeBytes { key in
            message.withUnsafeBytes { message in
                ak_EVP_Q_mac(
                    nil, "HMAC", nil, "SHA256", nil, key.baseAddress, key.count,
                    message.baseAddress?.assumingMemoryBound(to: UInt8.self), message.count, &output, 32, &length) != nil
            }
        }
        guard done, length == 32 else { throw .cryptoFailure("HMAC-SHA-256 failed") }
        return output
    }

    /// SHA-256 of `data`.
    package static func sha256(_ data: some Collection<UInt8>) throws(AgeError) -> [UInt8] {
        try requireLoaded()
        let message = Array(data)
        var output = [UInt8](repeating: 0, count: 32)
        var size: UInt32 = 0
        let done = message.withUnsafeBytes { message in
            ak_EVP_Digest(message.baseAddress, message.count, &output, &size, ak_EVP_sha256(), nil) == 1
        }
        guard done, size == 32 else { throw .cryptoFailure("SHA-256 failed") }
        return output
    }

    /// Constant-time equality of two byte strings of the same length (CRYPTO_memcmp).
    package static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        guard !a.isEmpty else { return true }
        return a.withUnsafeBytes { a in b.withUnsafeBytes { b in ak_CRYPTO_memcmp(a.baseAddress, b.baseAddress, a.count) == 0 } }
    }

    /// A C string with static storage: `OSSL_PARAM` keeps the pointer, so it must outlive the call.
    package static func cString(_ string: StaticString) -> UnsafePointer<CChar> {
        UnsafeRawPointer(string.utf8Start).assumingMemoryBound(to: CChar.self)
    }
}
