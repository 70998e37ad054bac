import CCryptoLoader
import COpenSSL

/// ChaCha20-Poly1305 (RFC 7539) through OpenSSL's EVP_CIPHER, with no additional data, as age
/// uses it for stanza bodies (zero nonce, single-use key) and payload chunks (STREAM nonces).
package enum ChaChaPoly {
    package static let tagLength = 16
    package static let nonceLength = 12

    private static let getTag: Int32 = 0x10  // EVP_CTRL_AEAD_GET_TAG
    private static let setTag: Int32 = 0x11  // EVP_CTRL_AEAD_SET_TAG

    /// `plaintext` encrypted under the 32-byte `key` and 12-byte `nonce`, the tag appended.
    package static func seal(key: SecretBytes, nonce: [UInt8], _ plaintext: some Collection<UInt8>) throws(AgeError) -> [UInt8] {
        let input = Array(plaintext)
        var output = [UInt8](repeating: 0, count: input.count + tagLength)
        let sealed = try run(key: key, nonce: nonce, encrypt: true) { context in
            var length: Int32 = 0
            let body =
                input.isEmpty
                || output.withUnsafeMutableBufferPointer { out in
                    ak_EVP_EncryptUpdate(context, out.baseAddress, &length, input, Int32(input.count)) == 1 && Int(length) == input.count
                }
            return output.withUnsafeMutableBufferPointer { out in
                guard body, let base = out.baseAddress else { return false }
                return ak_EVP_EncryptFinal_ex(context, base + input.count, &length) == 1
                    && ak_EVP_CIPHER_CTX_ctrl(context, getTag, Int32(tagLength), base + input.count) == 1
            }
        }
        guard sealed else { throw .cryptoFailure("ChaCha20-Poly1305 encryption failed") }
        return output
    }

    /// The plaintext of `ciphertext` (tag last), or `nil` when it does not authenticate under
    /// `key` and `nonce`. Nothing of an unauthenticated plaintext is returned (it is wiped).
    package static func open(key: SecretBytes, nonce: [UInt8], _ ciphertext: some Collection<UInt8>) throws(AgeError) -> [UInt8]? {
        let input = Array(ciphertext)
        guard input.count >= tagLength else { return nil }
        let bodyLength = input.count - tagLength
        var tag = Array(input[bodyLength...])
        var output = [UInt8](repeating: 0, count: bodyLength)
        let opened = try run(key: key, nonce: nonce, encrypt: false) { context in
            var length: Int32 = 0
            let body =
                bodyLength == 0
                || output.withUnsafeMutableBufferPointer { out in
                    ak_EVP_DecryptUpdate(context, out.baseAddress, &length, input, Int32(bodyLength)) == 1 && Int(length) == bodyLength
                }
            guard body, ak_EVP_CIPHER_CTX_ctrl(context, setTag, Int32(tagLength), &tag) == 1 else { return false }
            var final = [UInt8](repeating: 0, count: 16)
            return ak_EVP_DecryptFinal_ex(context, &final, &length) == 1
        }
        guard opened else {
            SecretBytes.wipe(&output)
            return nil
        }
        return output
    }

    private static func run(key: SecretBytes, nonce: [UInt8], encrypt: Bool, _ body: (OpaquePointer) -> Bool) throws(AgeError) -> Bool {
        try AgeCrypto.requireLoaded()
        guard key.count == 32, nonce.count == nonceLength else { throw .cryptoFailure("ChaCha20-Poly1305 key or nonce of the wrong size") }
        guard let cipher = Cipher.shared.chacha else { throw .cryptoFailure("OpenSSL has no ChaCha20-Poly1305") }
        guard let context = ak_EVP_CIPHER_CTX_new() else { throw .cryptoFailure("OpenSSL cannot make a cipher context") }
        defer { ak_EVP_CIPHER_CTX_free(context) }
        let initialised = try key.withUnsafeBytes { key in
            let bytes = key.baseAddress?.assumingMemoryBound(to: UInt8.self)
            return encrypt
                ? ak_EVP_EncryptInit_ex2(context, cipher, bytes, nonce, nil) == 1
                : ak_EVP_DecryptInit_ex2(context, cipher, bytes, nonce, nil) == 1
        }
        guard initialised else { throw .cryptoFailure("ChaCha20-Poly1305 could not be set up") }
        return body(context)
    }
}

/// The `EVP_CIPHER`, fetched once per process (fetching by name takes a lock and a lookup);
/// OpenSSL documents fetched algorithms as immutable and safe to share between threads.
private final class Cipher: @unchecked Sendable {
    package static let shared = Cipher()
    package let chacha: OpaquePointer?

    private init() {
        chacha = ak_EVP_CIPHER_fetch(nil, "ChaCha20-Poly1305", nil)
    }
}
