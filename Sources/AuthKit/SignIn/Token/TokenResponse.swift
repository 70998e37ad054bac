import AuthKitCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A successful token response (RFC 6749 §5.1, OIDC Core §3.1.3.3). Every token in it is a
/// secret: the description says which are present, never their values.
package struct TokenResponse: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    package let accessToken: String
    package let tokenType: String
    /// Seconds the access token lives, as the provider said (nil when it did not say).
    package let expiresIn: Int?
    package let refreshToken: String?
    package let idToken: String?
    /// The granted scopes, when the provider listed them (RFC 6749 §5.1: else as requested).
    package let scopes: [String]?
    /// A token exchange's `issued_token_type` (RFC 8693 §2.2.1).
    package var issuedTokenType: String? = nil
    /// When authkit received the response; `expiresIn` counts from here.
    package let receivedAt: Date

    package init(
        accessToken: String, tokenType: String = "Bearer", expiresIn: Int?, refreshToken: String?,
        idToken: String?, scopes: [String]?, receivedAt: Date
    ) {
        self.accessToken = accessToken
        self.tokenType = tokenType
        self.expiresIn = expiresIn
        self.refreshToken = refreshToken
        self.idToken = idToken
        self.scopes = scopes
        self.receivedAt = receivedAt
    }

    /// When the access token expires, if the provider said.
    package var expiresAt: Date? {
        expiresIn.map { receivedAt.addingTimeInterval(TimeInterval($0)) }
    }

    /// The longest lifetime authkit believes: a larger `expires_in` is taken as one year, so a
    /// provider's `9223372036854775807` can neither overflow a date nor live forever.
    package static let maximumLifetime = 365 * 24 * 3600

    /// Parses a 200 response body, strictly: one JSON reader for every answer (a member sent
    /// twice is refused, not "the last one wins"), `Bearer` or `DPoP` tokens (case-insensitively),
    /// tokens that can go into a header or a form as they are, scopes as RFC 6749 §3.3 spells
    /// them, and an `expires_in` within 0 … one year.
    init(body: [UInt8], receivedAt: Date) throws(TokenEndpointError) {
        let raw: Raw
        do throws(JSONDocumentError) {
            raw = try JSONDocument.tokenResponse.decode(Raw.self, from: body)
        } catch {
            throw .malformedResponse(error.reason)
        }
        guard let accessToken = raw.access_token, !accessToken.isEmpty else {
            throw .malformedResponse("it has no access_token")
        }
        guard let tokenType = raw.token_type else { throw .malformedResponse("it has no token_type") }
        // RFC 6749 §5.1: case-insensitive (glewlwyd answers `bearer`).
        let normalizedType: String
        switch tokenType.lowercased() {
        case "bearer": normalizedType = "Bearer"
        case "dpop": normalizedType = "DPoP"
        default: throw .unsupportedTokenType(ProviderText.clean(tokenType, limit: 40) ?? "?")
        }
        for (name, token) in [("access_token", accessToken), ("refresh_token", raw.refresh_token), ("id_token", raw.id_token)] {
            if let token, !TokenText.isTransportable(token) {
                throw .malformedResponse(
                    "its \(name) contains spaces, control or non-ASCII characters, which no header or form can carry as they are")
            }
        }
        var scopes: [String]?
        if let scope = raw.scope {
            let tokens = scope.split(separator: " ").map(String.init)
            guard tokens.allSatisfy(Self.isScopeToken) else {
                throw .malformedResponse("its scope is not a space-separated list of RFC 6749 scope tokens")
            }
            scopes = tokens
        }
        var expiresIn = raw.expires_in?.value
        if let lifetime = expiresIn {
            guard lifetime >= 0 else { throw .malformedResponse("expires_in is negative") }
            expiresIn = min(lifetime, Self.maximumLifetime)
        }
        self.init(
            accessToken: accessToken, tokenType: normalizedType, expiresIn: expiresIn,
            refreshToken: raw.refresh_token.flatMap { $0.isEmpty ? nil : $0 },
            idToken: raw.id_token.flatMap { $0.isEmpty ? nil : $0 },
            scopes: scopes, receivedAt: receivedAt)
        issuedTokenType = raw.issued_token_type
    }

    /// The `refresh_token` of a 200 answer the strict parse refused for something else (an
    /// unknown `token_type`, a malformed `scope` …): by then the provider has rotated the
    /// refresh token, so the new one is kept rather than lost. Nil when the body is no JSON
    /// object the reader takes, or names no usable refresh token.
    static func refreshTokenOnly(body: [UInt8]) -> String? {
        struct Raw: Decodable { var refresh_token: String? }
        guard let raw = try? JSONDocument.tokenResponse.decode(Raw.self, from: body), let token = raw.refresh_token, !token.isEmpty,
            token.utf8.count <= 16 * 1024, TokenText.isTransportable(token)
        else { return nil }
        return token
    }

    /// RFC 6749 §3.3: `scope-token = 1*( %x21 / %x23-5B / %x5D-7E )`.
    static func isScopeToken(_ token: String) -> Bool {
        !token.isEmpty && token.utf8.allSatisfy { $0 == 0x21 || (0x23...0x5B).contains($0) || (0x5D...0x7E).contains($0) }
    }

    package var description: String {
        var present = ["access_token"]
        if refreshToken != nil { present.append("refresh_token") }
        if idToken != nil { present.append("id_token") }
        return "TokenResponse(\(present.joined(separator: ", ")), expires_in \(expiresIn.map(String.init) ?? "?"))"
    }
    package var debugDescription: String { description }
    package var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "expiresIn": expiresIn as Any, "scopes": scopes as Any, "hasRefreshToken": refreshToken != nil,
                "hasIDToken": idToken != nil,
            ])
    }

    private struct Raw: Decodable {
        var access_token: String?
        var token_type: String?
        var expires_in: LenientInteger?
        var refresh_token: String?
        var id_token: String?
        var scope: String?
        var issued_token_type: String?
    }
}

/// An integer some providers send as a JSON string ("3599").
struct LenientInteger: Decodable {
    var value: Int

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let number = try? container.decode(Int.self) {
            value = number
        } else if let double = try? container.decode(Double.self), double.isFinite, double.rounded() == double {
            // 3600.0, or a number past Int's range (1e300): clamped, never a trapping conversion.
            value = double >= 9.2e18 ? Int.max : double <= -9.2e18 ? Int.min : Int(double)
        } else if let text = try? container.decode(String.self), let number = Int(text) {
            value = number
        } else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "not an integer")
        }
    }
}
