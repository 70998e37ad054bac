import CCryptoLoader

/// OpenSSL's libcrypto, opened on first use by CCryptoLoader (authkit processes that need
/// no cryptography, such as `authkit token` with a valid stored token, never load it).
enum CryptoLibrary {
    /// Opens libcrypto if needed; throws ``JOSEError/cryptoFailure(_:)`` naming what is
    /// missing when it cannot be loaded.
    static func requireLoaded() throws(JOSEError) {
        var message = [CChar](repeating: 0, count: 256)
        guard ak_crypto_load(&message, message.count) != 0 else { return }
        throw .cryptoFailure(String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }
}
