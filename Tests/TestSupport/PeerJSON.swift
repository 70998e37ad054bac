import Foundation

/// Loosely parsed JSON for talking to test peers (not the strict parser authkit itself uses), `Sendable` so peer ready lines and control-API answers can cross
/// task boundaries in tests.
public enum PeerJSON: Sendable, Equatable, Codable, CustomStringConvertible {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([PeerJSON])
    case object([String: PeerJSON])

    /// Parses `data` as one JSON document.
    public init(data: Data) throws {
        self = try JSONDecoder().decode(PeerJSON.self, from: data)
    }

    public init(from decoder: Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([PeerJSON].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: PeerJSON].self))
        }
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .number(let value):
            if value == value.rounded(), abs(value) < 1e15 { try container.encode(Int64(value)) } else { try container.encode(value) }
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }

    /// The member `key` of an object, `.null` otherwise.
    public subscript(key: String) -> PeerJSON {
        if case .object(let members) = self, let value = members[key] { return value }
        return .null
    }

    /// The element at `index` of an array, `.null` otherwise.
    public subscript(index: Int) -> PeerJSON {
        if case .array(let elements) = self, elements.indices.contains(index) { return elements[index] }
        return .null
    }

    public var string: String? { if case .string(let value) = self { return value } else { return nil } }
    public var int: Int? { if case .number(let value) = self { return Int(exactly: value.rounded()) } else { return nil } }
    public var bool: Bool? { if case .bool(let value) = self { return value } else { return nil } }
    public var array: [PeerJSON] { if case .array(let value) = self { return value } else { return [] } }
    public var object: [String: PeerJSON] { if case .object(let value) = self { return value } else { return [:] } }
    public var isNull: Bool { self == .null }

    /// Compact JSON text.
    public var data: Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(self)) ?? Data("null".utf8)
    }

    public var description: String { String(decoding: data, as: UTF8.self) }
}

extension PeerJSON: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral, ExpressibleByNilLiteral
{
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int) { self = .number(Double(value)) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(arrayLiteral elements: PeerJSON...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, PeerJSON)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
    public init(nilLiteral: ()) { self = .null }
}
