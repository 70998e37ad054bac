import JOSE

/// A PKCE code verifier (RFC 7636 §4.1) and its S256 challenge. S256 is the only method
/// authkit sends: `plain` would put the verifier itself in the browser's address bar.
///
/// The verifier is a secret until the token request: it has no readable description, and
/// `print`, `dump` and string interpolation show `PKCEVerifier(redacted)`.
package struct PKCEVerifier: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The verifier as sent in the token request's `code_verifier`.
    package let value: String

    /// `code_challenge` = BASE64URL(SHA-256(ASCII(verifier))).
    package let challenge: String

    /// SHA-256 through libcrypto, which is opened on first use: a missing library is a typed
    /// error here, never a trap.
    private static func challenge(for value: String) throws(AuthorizationError) -> String {
        do {
            return try SHA256.base64URLDigest(of: value)
        } catch {
            throw .invalidRequest("the PKCE challenge cannot be computed: \(error)")
        }
    }

    /// Always `S256`.
    package var challengeMethod: String { "S256" }

    /// A fresh verifier from the system CSPRNG: `byteCount` random bytes, base64url-encoded.
    /// 32 bytes (the default) give 43 characters and 256 bits; 96 give the maximum 128.
    package init(byteCount: Int = 32) throws(AuthorizationError) {
        guard (32...96).contains(byteCount) else {
            throw .invalidRequest("a PKCE verifier is made of 32–96 random bytes (RFC 7636: 43–128 characters)")
        }
        do {
            value = try SecureRandom.token(byteCount: byteCount)
        } catch {
            throw .randomUnavailable(error.description)
        }
        challenge = try Self.challenge(for: value)
    }

    /// A verifier received from elsewhere (tests, RFC 7636 Appendix B). Must be 43–128
    /// characters of the unreserved set.
    package init(validating value: String) throws(AuthorizationError) {
        let allowed = value.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."),
                UInt8(ascii: "_"), UInt8(ascii: "~"):
                return true
            default:
                return false
            }
        }
        guard (43...128).contains(value.utf8.count), allowed else {
            throw .invalidRequest("a PKCE verifier must be 43–128 unreserved characters")
        }
        self.value = value
        challenge = try Self.challenge(for: value)
    }

    package var description: String { "PKCEVerifier(redacted)" }
    package var debugDescription: String { description }
    package var customMirror: Mirror { Mirror(self, children: []) }
}
