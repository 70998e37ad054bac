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

    /// Whether `target` (an `htu`) names its endpoint one way only: no dot segment, no escaped
    /// letter, digit or `-._~` (RFC 3986 §6.2.2 decodes those), no escape in the host, no bad
    /// escape. A server compares targets normalised (RFC 9449 §4.3), so one that is not already
    /// normal could be another endpoint than the one a check compared it with.
    package static func isPlainTarget(_ target: String) -> Bool {
        guard let schemeEnd = target.firstRange(of: "://") else { return false }
        let rest = target[schemeEnd.upperBound...]
        let slash = rest.firstIndex(of: "/") ?? rest.endIndex
        guard !rest[..<slash].contains("%") else { return false }
        let path = rest[slash...]
        guard !path.split(separator: "/", omittingEmptySubsequences: false).contains(where: { $0 == "." || $0 == ".." }) else {
            return false
        }
        var bytes = Array(path.utf8)[...]
        while let byte = bytes.popFirst() {
            guard byte == UInt8(ascii: "%") else { continue }
            guard bytes.count >= 2, let value = UInt8(String(decoding: bytes.prefix(2), as: UTF8.self), radix: 16) else { return false }
            bytes = bytes.dropFirst(2)
            let unreserved =
                (0x41...0x5A).contains(value) || (0x61...0x7A).contains(value) || (0x30...0x39).contains(value)
                || value == UInt8(ascii: "-") || value == UInt8(ascii: ".") || value == UInt8(ascii: "_") || value == UInt8(ascii: "~")
            if unreserved { return false }
        }
        return true
    }

    /// `target` as servers may route it whatever way it is written: the host without a trailing
    /// dot, the path in lower case without empty segments, trailing slashes or `;` parameters.
    /// Two targets with the same key may be one endpoint to a server.
    package static func routeKey(of target: String) -> String {
        guard let schemeEnd = target.firstRange(of: "://") else { return target.lowercased() }
        let rest = target[schemeEnd.upperBound...]
        let slash = rest.firstIndex(of: "/") ?? rest.endIndex
        var authority = rest[..<slash].lowercased()
        if let colon = authority.lastIndex(of: ":"), !authority[colon...].contains("]") {
            let host = authority[..<colon]
            authority = String(host.hasSuffix(".") ? host.dropLast() : host) + authority[colon...]
        } else if authority.hasSuffix(".") {
            authority.removeLast()
        }
        let segments = rest[slash...].lowercased().split(separator: "/").map { $0.split(separator: ";", maxSplits: 1).first ?? "" }
        return target[..<schemeEnd.upperBound].lowercased() + authority + "/" + segments.filter { !$0.isEmpty }.joined(separator: "/")
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
