/// The OAuth client authkit acts as: a public native client (the default) or, for providers
/// that insist, a confidential one with a client secret (RFC 6749 §2.3.1).
package struct OAuthClient: Sendable, Equatable, CustomStringConvertible {
    package let clientID: String
    package let clientSecret: ClientSecret?

    package init(clientID: String, clientSecret: ClientSecret? = nil) {
        self.clientID = clientID
        self.clientSecret = clientSecret
    }

    package var isPublic: Bool { clientSecret == nil }

    package var description: String {
        "OAuthClient(\(clientID)\(clientSecret == nil ? ", public" : ", with secret"))"
    }

    /// Adds client authentication to a token-endpoint-style request: `client_id` in the body
    /// for a public client; for a confidential one HTTP Basic (`client_secret_basic`, the
    /// default of RFC 6749 and OIDC) unless the provider lists only `client_secret_post`.
    func authenticate(
        fields: inout [(name: String, value: String)], headers: inout HTTPHeaders, supportedMethods: [String]?
    ) {
        guard let clientSecret else {
            fields.append(("client_id", clientID))
            return
        }
        let methods = supportedMethods ?? ["client_secret_basic"]
        if methods.contains("client_secret_basic") || !methods.contains("client_secret_post") {
            // RFC 6749 §2.3.1: form-encode id and secret before base64.
            let pair = FormEncoding.escape(clientID) + ":" + FormEncoding.escape(clientSecret.value)
            headers.replace("Authorization", with: "Basic " + Base64Encoding.encode(Array(pair.utf8)))
        } else {
            fields.append(("client_id", clientID))
            fields.append(("client_secret", clientSecret.value))
        }
    }
}

/// A client secret. Never printed: descriptions show `ClientSecret(redacted)`.
public struct ClientSecret: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The secret itself; never print or log it.
    public let value: String
    /// Wraps a client secret so that it never shows in descriptions, logs or dumps.
    public init(_ value: String) { self.value = value }
    public var description: String { "ClientSecret(redacted)" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: []) }
}

/// Standard padded base64 (RFC 4648 §4), for HTTP Basic credentials.
enum Base64Encoding {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    static func encode(_ bytes: [UInt8]) -> String {
        var out = [UInt8]()
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var index = 0
        while index < bytes.count {
            let b0 = bytes[index]
            let b1 = index + 1 < bytes.count ? bytes[index + 1] : nil
            let b2 = index + 2 < bytes.count ? bytes[index + 2] : nil
            out.append(alphabet[Int(b0 >> 2)])
            out.append(alphabet[Int((b0 & 0x03) << 4 | (b1 ?? 0) >> 4)])
            out.append(b1.map { alphabet[Int(($0 & 0x0F) << 2 | (b2 ?? 0) >> 6)] } ?? UInt8(ascii: "="))
            out.append(b2.map { alphabet[Int($0 & 0x3F)] } ?? UInt8(ascii: "="))
            index += 3
        }
        return String(decoding: out, as: UTF8.self)
    }
}
