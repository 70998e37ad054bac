// Codable needs the full Swift runtime: not part of the Embedded Swift build (scripts/build-lean).
#if !hasFeature(Embedded)
/// Decodes `Decodable` values from strict JSON: the one JSON reader of authkit, for documents
/// read into `Codable` types (provider answers, stored records, other tools' config files).
///
/// The bytes are parsed by ``JSONValue/init(parsing:limits:)-(Collection<UInt8>,_)`` first, so
/// every document gets the same rules — duplicate member names, trailing data, invalid UTF-8, a
/// byte-order mark, lone surrogates, documents over ``limits`` in size or depth are refused —
/// and only then mapped onto the type. Numbers are exact: an `Int` member must hold an integer
/// that fits (`1.5`, `1e400` and `9223372036854775808` are refused, never rounded or wrapped),
/// and a `Double` member must be finite.
///
/// ```swift
/// let answer = try StrictJSONDecoder(limits: JSONLimits(maximumBytes: 64 << 10))
///     .decode(TokenAnswer.self, from: body)
/// ```
///
/// Errors are ``JSONError`` (the document is not strict JSON) or `DecodingError` (it is JSON
/// but not of the expected shape); neither quotes a string value of the document.
public struct StrictJSONDecoder: Sendable {
    /// Size and depth bounds for the documents this decoder reads.
    public var limits: JSONLimits

    /// A decoder with `limits` (4 MiB and 64 levels by default).
    public init(limits: JSONLimits = .default) {
        self.limits = limits
    }

    /// Parses `bytes` strictly and decodes a `T` from them.
    public func decode<T: Decodable>(_ type: T.Type, from bytes: some Collection<UInt8>) throws -> T {
        let value = try JSONValue(parsing: bytes, limits: limits)
        return try decode(type, from: value)
    }

    /// Decodes a `T` from an already parsed value.
    public func decode<T: Decodable>(_ type: T.Type, from value: JSONValue) throws -> T {
        try T(from: JSONValueDecoding(value: value, codingPath: []))
    }
}

/// One position in the document being decoded.
struct JSONValueDecoding: Decoder {
    let value: JSONValue
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .object(let object) = value else {
            throw DecodingError.typeMismatch(
                [String: Any].self, .init(codingPath: codingPath, debugDescription: "expected an object, found \(value.kindName)"))
        }
        return KeyedDecodingContainer(KeyedJSONContainer<Key>(object: object, codingPath: codingPath))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .array(let elements) = value else {
            throw DecodingError.typeMismatch(
                [Any].self, .init(codingPath: codingPath, debugDescription: "expected an array, found \(value.kindName)"))
        }
        return UnkeyedJSONContainer(elements: elements, codingPath: codingPath)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        SingleJSONContainer(value: value, codingPath: codingPath)
    }
}

/// Scalar decoding shared by the three container kinds.
enum JSONScalar {
    static func mismatch<T>(_ type: T.Type, _ value: JSONValue, _ path: [any CodingKey], _ expected: String) -> DecodingError {
        .typeMismatch(type, .init(codingPath: path, debugDescription: "expected \(expected), found \(value.kindName)"))
    }

    static func bool(_ value: JSONValue, _ path: [any CodingKey]) throws -> Bool {
        guard case .bool(let flag) = value else { throw mismatch(Bool.self, value, path, "a Boolean") }
        return flag
    }

    static func string(_ value: JSONValue, _ path: [any CodingKey]) throws -> String {
        guard case .string(let text) = value else { throw mismatch(String.self, value, path, "a string") }
        return text
    }

    static func double(_ value: JSONValue, _ path: [any CodingKey]) throws -> Double {
        guard case .number(let number) = value else { throw mismatch(Double.self, value, path, "a number") }
        let double = number.doubleValue
        guard double.isFinite else {
            throw DecodingError.dataCorrupted(.init(codingPath: path, debugDescription: "the number is out of range"))
        }
        return double
    }

    static func integer<T: FixedWidthInteger>(_ type: T.Type, _ value: JSONValue, _ path: [any CodingKey]) throws -> T {
        guard case .number(let number) = value else { throw mismatch(type, value, path, "an integer") }
        if let exact = number.int64Value, let converted = T(exactly: exact) { return converted }
        if !T.isSigned, let unsigned = UInt64(number.text), let converted = T(exactly: unsigned) { return converted }
        throw DecodingError.dataCorrupted(
            .init(codingPath: path, debugDescription: "expected an integer that fits \(T.self), found a fraction or a number out of range"))
    }

    static func decode<T: Decodable>(_ type: T.Type, _ value: JSONValue, _ path: [any CodingKey]) throws -> T {
        // The standard library's scalars ask a single-value container for themselves: answer
        // them here, with the exactness rules above (and without recursing).
        if T.self == String.self { return try cast(string(value, path), path) }
        if T.self == Bool.self { return try cast(bool(value, path), path) }
        if T.self == Double.self { return try cast(double(value, path), path) }
        if T.self == Float.self {
            let float = Float(try double(value, path))
            guard float.isFinite else {
                throw DecodingError.dataCorrupted(.init(codingPath: path, debugDescription: "the number is out of range"))
            }
            return try cast(float, path)
        }
        // Metatype comparisons, not `T.self as? any FixedWidthInteger.Type`: a cast to a
        // protocol scans the binary's conformance records on first use of each type, which
        // `authkit token` (reading one record) would pay on every run.
        if T.self == Int.self { return try cast(integer(Int.self, value, path), path) }
        if T.self == Int64.self { return try cast(integer(Int64.self, value, path), path) }
        if T.self == Int32.self { return try cast(integer(Int32.self, value, path), path) }
        if T.self == Int16.self { return try cast(integer(Int16.self, value, path), path) }
        if T.self == Int8.self { return try cast(integer(Int8.self, value, path), path) }
        if T.self == UInt.self { return try cast(integer(UInt.self, value, path), path) }
        if T.self == UInt64.self { return try cast(integer(UInt64.self, value, path), path) }
        if T.self == UInt32.self { return try cast(integer(UInt32.self, value, path), path) }
        if T.self == UInt16.self { return try cast(integer(UInt16.self, value, path), path) }
        if T.self == UInt8.self { return try cast(integer(UInt8.self, value, path), path) }
        return try T(from: JSONValueDecoding(value: value, codingPath: path))
    }

    private static func cast<T>(_ scalar: Any, _ path: [any CodingKey]) throws -> T {
        guard let typed = scalar as? T else {
            throw DecodingError.typeMismatch(T.self, .init(codingPath: path, debugDescription: "unsupported scalar type"))
        }
        return typed
    }
}

struct KeyedJSONContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let object: JSONObject
    let codingPath: [any CodingKey]

    var allKeys: [Key] { object.keys.compactMap { Key(stringValue: $0) } }

    func contains(_ key: Key) -> Bool { object[key.stringValue] != nil }

    private func member(_ key: Key) throws -> JSONValue {
        guard let value = object[key.stringValue] else {
            throw DecodingError.keyNotFound(
                key, .init(codingPath: codingPath, debugDescription: "the member \(key.stringValue) is missing"))
        }
        return value
    }

    func decodeNil(forKey key: Key) throws -> Bool { try member(key).isNull }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try JSONScalar.decode(type, try member(key), codingPath + [key])
    }

    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        guard let value = object[key.stringValue], !value.isNull else { return nil }
        return try JSONScalar.decode(type, value, codingPath + [key])
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        try JSONValueDecoding(value: try member(key), codingPath: codingPath + [key]).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try JSONValueDecoding(value: try member(key), codingPath: codingPath + [key]).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder {
        JSONValueDecoding(value: object[JSONCodingKey.superKey.stringValue] ?? .null, codingPath: codingPath + [JSONCodingKey.superKey])
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        JSONValueDecoding(value: object[key.stringValue] ?? .null, codingPath: codingPath + [key])
    }
}

struct UnkeyedJSONContainer: UnkeyedDecodingContainer {
    let elements: [JSONValue]
    let codingPath: [any CodingKey]
    var currentIndex = 0

    init(elements: [JSONValue], codingPath: [any CodingKey]) {
        self.elements = elements
        self.codingPath = codingPath
    }

    var count: Int? { elements.count }
    var isAtEnd: Bool { currentIndex >= elements.count }

    private mutating func next<T>(_ type: T.Type) throws -> (JSONValue, [any CodingKey]) {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(type, .init(codingPath: codingPath, debugDescription: "the array has no more elements"))
        }
        defer { currentIndex += 1 }
        return (elements[currentIndex], codingPath + [JSONCodingKey(index: currentIndex)])
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd else { return false }
        if elements[currentIndex].isNull {
            currentIndex += 1
            return true
        }
        return false
    }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let (value, path) = try next(type)
        return try JSONScalar.decode(type, value, path)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        let (value, path) = try next([String: Any].self)
        return try JSONValueDecoding(value: value, codingPath: path).container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let (value, path) = try next([Any].self)
        return try JSONValueDecoding(value: value, codingPath: path).unkeyedContainer()
    }

    mutating func superDecoder() throws -> any Decoder {
        let (value, path) = try next(Any.self)
        return JSONValueDecoding(value: value, codingPath: path)
    }
}

struct SingleJSONContainer: SingleValueDecodingContainer {
    let value: JSONValue
    let codingPath: [any CodingKey]

    func decodeNil() -> Bool { value.isNull }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try JSONScalar.decode(type, value, codingPath) }
}

/// Coding keys for array positions and `super`.
struct JSONCodingKey: CodingKey {
    var stringValue: String
    var intValue: Int?

    init(stringValue: String) {
        self.stringValue = stringValue
        intValue = nil
    }

    init(intValue: Int) {
        stringValue = "\(intValue)"
        self.intValue = intValue
    }

    init(index: Int) { self.init(intValue: index) }

    static let superKey = JSONCodingKey(stringValue: "super")
}

extension JSONValue {
    /// What kind of value this is, for messages (never the value itself).
    var kindName: String {
        switch self {
        case .null: return "null"
        case .bool: return "a Boolean"
        case .number: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        }
    }
}
#endif
