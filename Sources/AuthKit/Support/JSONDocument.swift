import StrictJSON

/// The JSON documents authkit reads, each with its own bounds: one strict reader
/// (``StrictJSONDecoder``) for all of them, and limits that fit what each kind can hold — a
/// token response has no business being megabytes long.
enum JSONDocument: Sendable {
    case discovery
    case keySet
    case tokenResponse
    case tokenError
    case deviceAuthorization
    case graphPage
    case graphError
    case storedRecord
    case clientConfig

    var limits: JSONLimits {
        switch self {
        case .discovery: return JSONLimits(maximumBytes: 256 << 10, maximumDepth: 16)
        case .keySet: return JSONLimits(maximumBytes: 512 << 10, maximumDepth: 16)
        // Entra's access tokens run to a few KiB; an id_token with many groups to ~10 KiB.
        case .tokenResponse: return JSONLimits(maximumBytes: 128 << 10, maximumDepth: 8)
        case .tokenError, .deviceAuthorization: return JSONLimits(maximumBytes: 32 << 10, maximumDepth: 8)
        case .graphPage: return JSONLimits(maximumBytes: 4 << 20, maximumDepth: 32)
        case .graphError: return JSONLimits(maximumBytes: 64 << 10, maximumDepth: 16)
        // Several resources' access tokens beside the main one.
        case .storedRecord: return JSONLimits(maximumBytes: 1 << 20, maximumDepth: 8)
        case .clientConfig: return JSONLimits(maximumBytes: 4 << 20, maximumDepth: 64)
        }
    }

    /// Decodes `type` strictly within this kind's limits; the error is a sentence saying why,
    /// naming a field or a position, never a value.
    func decode<T: Decodable>(_ type: T.Type, from bytes: some Collection<UInt8>) throws(JSONDocumentError) -> T {
        do {
            return try StrictJSONDecoder(limits: limits).decode(type, from: bytes)
        } catch {
            throw JSONDocumentError(reason: Self.reason(error))
        }
    }

    /// Why a document was refused, as a phrase ("it is not valid JSON: duplicate member name
    /// ‘access_token’ at byte 40", "‘expires_in’ has the wrong type").
    static func reason(_ error: any Error) -> String {
        switch error {
        case let json as JSONError:
            return "it is not valid JSON: \(json.reason)"
        case DecodingError.keyNotFound(let key, let context):
            let path = (context.codingPath + [key]).map(\.stringValue).joined(separator: ".")
            return "it has no ‘\(path)’"
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context),
            DecodingError.dataCorrupted(let context):
            let path = context.codingPath.map(\.stringValue).joined(separator: ".")
            return path.isEmpty ? "it is not a JSON object" : "‘\(path)’ has the wrong type or is out of range"
        default:
            return "it is not valid JSON"
        }
    }
}

/// A document ``JSONDocument/decode(_:from:)`` refused.
struct JSONDocumentError: Error, Sendable, CustomStringConvertible {
    /// Why, as a phrase starting with "it" (see ``JSONDocument/reason(_:)``).
    var reason: String
    var description: String { reason }
}
