#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A successful token response (RFC 6749 §5.1, OIDC Core §3.1.3.3). Every token in it is a
/// secret: the description says which are present, never their values.
public struct TokenResponse: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public let accessToken: String
    public let tokenType: String
    /// Seconds the access token lives, as the provider said (nil when it did not say).
    public let expiresIn: Int?
    public let refreshToken: String?
    public let idToken: String?
    /// The granted scopes, when the provider listed them (RFC 6749 §5.1: else as requested).
    public let scopes: [String]?
    /// When authkit received the response; `expiresIn` counts from here.
    public let receivedAt: Date

    public init(
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
    public var expiresAt: Date? {
        expiresIn.map { receivedAt.addingTimeInterval(TimeInterval($0)) }
    }

    /// Parses a 200 response body. Only `Bearer` tokens are accepted (case-insensitively).
    init(body: [UInt8], receivedAt: Date) throws(TokenEndpointError) {
        let raw: Raw
        do {
            raw = try JSONDecoder().decode(Raw.self, from: Data(body))
        } catch {
            throw .malformedResponse(ProviderMetadata.reason(error))
        }
        guard let accessToken = raw.access_token, !accessToken.isEmpty else {
            throw .malformedResponse("it has no access_token")
        }
        guard let tokenType = raw.token_type else { throw .malformedResponse("it has no token_type") }
        guard tokenType.lowercased() == "bearer" else {
            throw .unsupportedTokenType(ProviderText.clean(tokenType, limit: 40) ?? "?")
        }
        if let expiresIn = raw.expires_in?.value, expiresIn < 0 {
            throw .malformedResponse("expires_in is negative")
        }
        self.init(
            accessToken: accessToken, tokenType: "Bearer", expiresIn: raw.expires_in?.value,
            refreshToken: raw.refresh_token.flatMap { $0.isEmpty ? nil : $0 },
            idToken: raw.id_token.flatMap { $0.isEmpty ? nil : $0 },
            scopes: raw.scope.map { $0.split(separator: " ").map(String.init) }, receivedAt: receivedAt)
    }

    public var description: String {
        var present = ["access_token"]
        if refreshToken != nil { present.append("refresh_token") }
        if idToken != nil { present.append("id_token") }
        return "TokenResponse(\(present.joined(separator: ", ")), expires_in \(expiresIn.map(String.init) ?? "?"))"
    }
    public var debugDescription: String { description }
    public var customMirror: Mirror {
        Mirror(self, children: [
            "expiresIn": expiresIn as Any, "scopes": scopes as Any, "hasRefreshToken": refreshToken != nil, "hasIDToken": idToken != nil,
        ])
    }

    private struct Raw: Decodable {
        var access_token: String?
        var token_type: String?
        var expires_in: LenientInteger?
        var refresh_token: String?
        var id_token: String?
        var scope: String?
    }
}

/// An integer some providers send as a JSON string ("3599").
struct LenientInteger: Decodable {
    var value: Int

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let number = try? container.decode(Int.self) {
            value = number
        } else if let double = try? container.decode(Double.self), double.isFinite, double.rounded() == double,
            abs(double) < 1e15
        {
            value = Int(double)
        } else if let text = try? container.decode(String.self), let number = Int(text) {
            value = number
        } else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "not an integer")
        }
    }
}
