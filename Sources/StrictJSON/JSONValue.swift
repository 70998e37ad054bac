/// A JSON value (RFC 8259).
///
/// Parse one with ``init(parsing:limits:)-(Collection<UInt8>,_)`` (strict: duplicate member
/// names, trailing text, invalid UTF-8, lone surrogates and unescaped control characters are
/// errors), write one with ``serialized(options:)``. Objects keep their members' order;
/// numbers keep their exact text.
///
/// The enum is not `indirect`: arrays and objects already store their elements out of line,
/// so boxing every scalar would only cost an allocation per value.
public enum JSONValue: Sendable, Hashable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number, kept as written.
    case number(JSONNumber)
    /// A string.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object, each member name at most once.
    case object(JSONObject)

    /// The member `key` when this is an object holding it.
    @inlinable
    public subscript(key: String) -> JSONValue? {
        guard case .object(let object) = self else { return nil }
        return object[key]
    }

    /// The string, when this is a string.
    @inlinable
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The Boolean, when this is `true` or `false`.
    @inlinable
    public var boolValue: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    /// The number, when this is a number.
    @inlinable
    public var numberValue: JSONNumber? {
        if case .number(let value) = self { return value }
        return nil
    }

    /// The number as an exact integer, when this is a number with an integral value that fits.
    public var int64Value: Int64? { numberValue?.int64Value }

    /// The number as a `Double`, when this is a number.
    public var doubleValue: Double? { numberValue?.doubleValue }

    /// The elements, when this is an array.
    @inlinable
    public var arrayValue: [JSONValue]? {
        if case .array(let value) = self { return value }
        return nil
    }

    /// The object, when this is an object.
    @inlinable
    public var objectValue: JSONObject? {
        if case .object(let value) = self { return value }
        return nil
    }

    /// True for `null`.
    @inlinable
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }
}

extension JSONValue: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByStringLiteral,
    ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral, ExpressibleByArrayLiteral,
    ExpressibleByDictionaryLiteral
{
    public init(nilLiteral: ()) { self = .null }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int64) { self = .number(JSONNumber(value)) }
    public init(floatLiteral value: Double) { self = .number(JSONNumber(value) ?? JSONNumber(0)) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        var object = JSONObject()
        for (key, value) in elements { object[key] = value }
        self = .object(object)
    }
}
