import JOSE

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What one DPoP proof (RFC 9449 §4) says: the request's method and target, the access token's
/// hash when it goes with one, the server's nonce. ``signed(with:issuedAt:)`` makes the proof.
package struct DPoPProof: Sendable, Equatable {
    /// `htm`: the request's method.
    package var method: String
    /// `htu`: the request's URL without query and fragment (RFC 9449 §4.2).
    package var target: String
    /// `ath`: base64url SHA-256 of the access token sent with the request (nil at the token
    /// endpoint).
    package var accessTokenHash: String?
    /// `nonce`: the server's newest `DPoP-Nonce`, if it sent one.
    package var nonce: String?

    /// The proof for `method` on `url`. `url` must be absolute http(s); its query and fragment
    /// are not part of the proof.
    package init(method: String, url: URL, accessTokenHash: String? = nil, nonce: String? = nil) throws(DPoPError) {
        guard HTTPRequest.Method(rawValue: method) != nil else { throw .invalidRequest("‘\(method)’ is not an HTTP method") }
        guard let target = Self.target(of: url) else {
            throw .invalidRequest("a DPoP proof names an absolute http(s) URL; this one is not")
        }
        if let accessTokenHash, accessTokenHash.utf8.count != 43 || (try? Base64URL.decode(accessTokenHash))?.count != 32 {
            throw .invalidRequest("ath is a base64url SHA-256 (43 characters)")
        }
        if let nonce, !DPoPNonces.isNonce(nonce) { throw .invalidRequest("the nonce is not an RFC 9449 nonce") }
        self.method = method
        self.target = target
        self.accessTokenHash = accessTokenHash
        self.nonce = nonce
    }

    /// `htu` of `url`: scheme, host, port (unless the scheme's default) and path; no user info,
    /// query or fragment (RFC 9449 §4.2), scheme and host lowercased (RFC 3986 §6.2.2.1).
    package static func target(of url: URL) -> String? {
        guard let scheme = url.scheme?.lowercased(), scheme == "https" || scheme == "http",
            var host = url.host(percentEncoded: true)?.lowercased(), !host.isEmpty
        else { return nil }
        if host.contains(":") && !host.hasPrefix("[") { host = "[\(host)]" }
        var text = "\(scheme)://\(host)"
        if let port = url.port, port != (scheme == "https" ? 443 : 80) { text += ":\(port)" }
        let path = url.path(percentEncoded: true)
        return text + (path.isEmpty ? "/" : path)
    }

    /// `ath` for `accessToken` (RFC 9449 §4.2: base64url SHA-256 of its ASCII).
    package static func hash(of accessToken: String) throws(DPoPError) -> String {
        do { return try SHA256.base64URLDigest(of: accessToken) } catch { throw .keyUnavailable("\(error)") }
    }

    /// The proof, a JWS: header `typ` `dpop+jwt`, `alg` ES256 and the public `jwk`; claims
    /// `jti` (fresh, 128 bits), `htm`, `htu`, `iat`, and `ath` and `nonce` when given.
    package func signed(with key: SigningKey, issuedAt: Date) throws(DPoPError) -> String {
        let jti: String
        do { jti = try SecureRandom.token(byteCount: 16) } catch { throw .keyUnavailable(error.description) }
        var header = JSONObject()
        header["typ"] = .string("dpop+jwt")
        header["alg"] = .string(JWSAlgorithm.es256.rawValue)
        header["jwk"] = .object(key.publicKey.publicMembers)
        var claims = JSONObject()
        claims["jti"] = .string(jti)
        claims["htm"] = .string(method)
        claims["htu"] = .string(target)
        claims["iat"] = .number(JSONNumber(Int64(issuedAt.timeIntervalSince1970.rounded(.down))))
        if let accessTokenHash { claims["ath"] = .string(accessTokenHash) }
        if let nonce { claims["nonce"] = .string(nonce) }
        do { return try key.compactJWS(header: header, payload: claims) } catch { throw .keyUnavailable("\(error)") }
    }
}
