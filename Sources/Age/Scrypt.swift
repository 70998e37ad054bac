import CCryptoLoader
import COpenSSL

/// scrypt (RFC 7914) through OpenSSL's EVP_KDF "SCRYPT", with age's r = 8 and p = 1.
package enum Scrypt {
    /// A 32-byte key from `passphrase` and `salt` with N = 2^`log2N`.
    package static func derive(_ passphrase: SecretBytes, salt: [UInt8], log2N: Int) throws(AgeError) -> SecretBytes {
        try AgeCrypto.requireLoaded()
        guard (1...30).contains(log2N) else { throw .cryptoFailure("scrypt work factor out of range") }
        guard let kdf = ak_EVP_KDF_fetch(nil, "SCRYPT", nil) else { throw .cryptoFailure("OpenSSL has no scrypt") }
        defer { ak_EVP_KDF_free(kdf) }
        guard let context = ak_EVP_KDF_CTX_new(kdf) else { throw .cryptoFailure("OpenSSL cannot make an scrypt context") }
        defer { ak_EVP_KDF_CTX_free(context) }
        // OSSL_PARAM keeps pointers to the numbers: they live in memory of their own until the end.
        let numbers = UnsafeMutablePointer<UInt64>.allocate(capacity: 2)
        let factors = UnsafeMutablePointer<UInt32>.allocate(capacity: 2)
        defer {
            numbers.deallocate()
            factors.deallocate()
        }
        let n = UInt64(1) << UInt64(log2N)
        factors.initialize(to: 8)  // r
        (factors + 1).initialize(to: 1)  // p
        numbers.initialize(to: n)
        // scrypt needs 128·r·N bytes for V plus 128·r·p for B; OpenSSL's default cap (32 MiB)
        // is below age's default work factor, so the cap is what this N needs, and a little more.
        (numbers + 1).initialize(to: 128 * 8 * (n + 2) + 128 * 8 + 1 << 20)
        var salt = salt
        let derived = try passphrase.withUnsafeBytes { (pass) throws(AgeError) -> SecretBytes? in
            SecretBytes(count: 32) { output in
                salt.withUnsafeMutableBytes { salt in
                    var params = [
                        ak_OSSL_PARAM_construct_octet_string(
                            AgeCrypto.cString("pass"), UnsafeMutableRawPointer(mutating: pass.baseAddress), pass.count),
                        ak_OSSL_PARAM_construct_octet_string(AgeCrypto.cString("salt"), salt.baseAddress, salt.count),
                        ak_OSSL_PARAM_construct_uint64(AgeCrypto.cString("n"), numbers),
                        ak_OSSL_PARAM_construct_uint32(AgeCrypto.cString("r"), factors),
                        ak_OSSL_PARAM_construct_uint32(AgeCrypto.cString("p"), factors + 1),
                        ak_OSSL_PARAM_construct_uint64(AgeCrypto.cString("maxmem_bytes"), numbers + 1),
                        ak_OSSL_PARAM_construct_end(),
                    ]
                    return ak_EVP_KDF_derive(context, output.baseAddress?.assumingMemoryBound(to: UInt8.self), 32, &params) == 1
                }
            }
        }
        guard let derived else { throw .cryptoFailure("scrypt failed (not enough memory for a work factor of 2^\(log2N)?)") }
        return derived
    }
}
