#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The claims of a JWT (RFC 7519 §4), with typed access to the registered ones.
///
/// The accessors are lenient (`nil` when a claim is absent or of another type);
/// ``IDTokenValidator`` is the strict reader, and refuses a claim of the wrong type.
public struct JWTClaims: Sendable {
    /// The claims object, members in their original order.
    public let json: JSONObject

    /// Claims from an object.
    public init(json: JSONObject) {
        self.json = json
    }

    /// Claims from a JWS payload, which must be a JSON object (strict JSON: a claim named
    /// twice is an error, so no reader can see a different value than the one checked).
    public init(payload: some Collection<UInt8>) throws(JOSEError) {
        let value: JSONValue
        do {
            value = try JSONValue(parsing: payload, limits: JSONLimits(maximumBytes: CompactJWS.maximumTokenSize, maximumDepth: 32))
        } catch {
            throw .malformedToken("the payload is \(JOSEError(error))")
        }
        guard case .object(let object) = value else { throw .malformedToken("the payload is not a JSON object") }
        json = object
    }

    /// The claims object as a JSON value (for printing or storing).
    public var jsonValue: JSONValue { .object(json) }

    /// The claim `name`.
    public subscript(name: String) -> JSONValue? { json[name] }

    /// `iss`.
    public var issuer: String? { json["iss"]?.stringValue }
    /// `sub`.
    public var subject: String? { json["sub"]?.stringValue }
    /// `aud` as a list: a single string gives one element (RFC 7519 §4.1.3).
    public var audience: [String] {
        switch json["aud"] {
        case .string(let single): return [single]
        case .array(let list): return list.compactMap(\.stringValue)
        default: return []
        }
    }
    /// `azp` (OpenID Connect Core §2).
    public var authorizedParty: String? { json["azp"]?.stringValue }
    /// `nonce`.
    public var nonce: String? { json["nonce"]?.stringValue }
    /// `tid`: the Microsoft Entra tenant id, when it is a plausible one (letters, digits, `-`,
    /// `.`, `_`, at most 64): any other `tid` is nil here, so it is never stored or shown.
    public var tenantID: String? {
        guard let tid = json["tid"]?.stringValue, IssuerRule.isSafeTenantID(tid) else { return nil }
        return tid
    }
    /// `exp` as seconds since 1970.
    public var expirationSeconds: Double? { json["exp"]?.doubleValue }
    /// `nbf` as seconds since 1970.
    public var notBeforeSeconds: Double? { json["nbf"]?.doubleValue }
    /// `iat` as seconds since 1970.
    public var issuedAtSeconds: Double? { json["iat"]?.doubleValue }
    /// `exp`.
    public var expiration: Date? { expirationSeconds.map { Date(timeIntervalSince1970: $0) } }
    /// `nbf`.
    public var notBefore: Date? { notBeforeSeconds.map { Date(timeIntervalSince1970: $0) } }
    /// `iat`.
    public var issuedAt: Date? { issuedAtSeconds.map { Date(timeIntervalSince1970: $0) } }
}
