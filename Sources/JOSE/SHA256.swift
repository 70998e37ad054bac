/// SHA-256 for what is hashed beside a signature: PKCE's code challenge (RFC 7636 §4.2), DPoP's
/// `ath` (RFC 9449 §4.2) and a key's thumbprint (RFC 7638), through the digest JWS uses.
public enum SHA256 {
    /// The 32-byte SHA-256 of `bytes`.
    public static func digest(_ bytes: some Collection<UInt8>) throws(JOSEError) -> [UInt8] {
        try CryptoLibrary.requireLoaded()
        let input = Array(bytes)
        var output = [UInt8](repeating: 0, count: Digest.sha256.length)
        let hashed = input.withUnsafeBytes { data in
            output.withUnsafeMutableBufferPointer { buffer in
                guard let base = buffer.baseAddress else { return false }
                return Digest.sha256.hash(data, into: base)
            }
        }
        guard hashed else { throw .cryptoFailure("SHA-256 is not available") }
        return output
    }

    /// The base64url (unpadded) SHA-256 of `text`'s UTF-8.
    public static func base64URLDigest(of text: String) throws(JOSEError) -> String {
        Base64URL.encode(try digest(text.utf8))
    }
}
