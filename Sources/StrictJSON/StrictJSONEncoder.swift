// Codable needs the full Swift runtime: not part of the Embedded Swift build (scripts/build-lean).
#if !hasFeature(Embedded)
/// Encodes `Encodable` values as JSON through ``JSONValue``: the one JSON writer of authkit, for
/// stored records and every `--json` output.
///
/// The text is written by ``JSONValue/serialized(options:)``, so every string is escaped for a
/// terminal (C0 and C1 controls, DEL, U+2028/2029 and the bidirectional controls become `\u`
/// escapes) and the output always parses back with ``StrictJSONDecoder``. Unlike Foundation's
/// encoder it never fails silently and never writes a number JSON cannot carry: a non-finite
/// `Double` is an `EncodingError`.
///
/// ```swift
/// let bytes = try StrictJSONEncoder(options: [.sortedKeys]).encode(record)
/// ```
public struct StrictJSONEncoder: Sendable {
    /// How the text is written (sorted keys, indentation).
    public var options: JSONValue.SerializationOptions

    /// What an optional member that is nil becomes.
    public enum NilEncoding: Sendable {
        /// The member is left out (as Foundation's encoder does).
        case omitted
        /// The member is written as `null`: a document whose members are all always there.
        case null
    }

    /// How member names are written.
    public enum KeyEncoding: Sendable {
        /// As the coding key says.
        case asDeclared
        /// `camelCase` coding keys as `snake_case` (`accessTokenExpiresAt` →
        /// `access_token_expires_at`, `clientID` → `client_id`), as Foundation's
        /// `convertToSnakeCase` does.
        case snakeCase
    }

    /// What a nil optional member becomes (left out by default).
    public var nilEncoding: NilEncoding

    /// How member names are written (as declared by default).
    public var keyEncoding: KeyEncoding

    /// An encoder writing with `options` (document order, compact, by default), nil members
    /// and member names as `nilEncoding` and `keyEncoding` say.
    public init(options: JSONValue.SerializationOptions = [], nilEncoding: NilEncoding = .omitted, keyEncoding: KeyEncoding = .asDeclared) {
        self.options = options
        self.nilEncoding = nilEncoding
        self.keyEncoding = keyEncoding
    }

    /// The value as a ``JSONValue`` tree.
    public func encodeValue<T: Encodable>(_ value: T) throws -> JSONValue {
        let node = EncodingNode(settings: EncodingSettings(nulls: nilEncoding == .null, snakeCase: keyEncoding == .snakeCase))
        try node.encode(value, codingPath: [])
        return node.json
    }

    /// The value as UTF-8 JSON text.
    public func encode<T: Encodable>(_ value: T) throws -> [UInt8] {
        try encodeValue(value).serializedBytes(options: options)
    }

    /// The value as JSON text.
    public func encodeString<T: Encodable>(_ value: T) throws -> String {
        try encodeValue(value).serialized(options: options)
    }
}

/// What every node of one encoding shares.
struct EncodingSettings {
    var nulls = false
    var snakeCase = false

    /// The member name for `key`.
    func name(_ key: String) -> String {
        snakeCase ? Self.snakeCased(key) : key
    }

    /// `camelCase` as `snake_case`: a word starts at an upper-case letter after a lower-case
    /// one, and at the last capital of a run followed by a lower-case letter (`URLPath` →
    /// `url_path`); underscores at either end are kept.
    static func snakeCased(_ key: String) -> String {
        let characters = Array(key)
        guard characters.contains(where: \.isUppercase) else { return key }
        var out = ""
        for (index, character) in characters.enumerated() {
            if character.isUppercase, index > 0 {
                let previous = characters[index - 1]
                let next = index + 1 < characters.count ? characters[index + 1] : nil
                if previous.isLowercase || previous.isNumber || (previous.isUppercase && next?.isLowercase == true) {
                    if out.last != "_" { out.append("_") }
                }
            }
            out += character.lowercased()
        }
        return out
    }
}

/// One value being built; containers write into their node, nested ones into child nodes.
final class EncodingNode {
    let settings: EncodingSettings

    init(settings: EncodingSettings) {
        self.settings = settings
    }

    enum Content {
        case empty
        case scalar(JSONValue)
        case object(keys: [String], members: [String: EncodingNode])
        case array([EncodingNode])
    }

    var content = Content.empty

    var json: JSONValue {
        switch content {
        case .empty: return .object(JSONObject())
        case .scalar(let value): return value
        case .array(let nodes): return .array(nodes.map(\.json))
        case .object(let keys, let members):
            var object = JSONObject()
            for key in keys { object[key] = members[key]?.json ?? .null }
            return .object(object)
        }
    }

    /// The child for `key`, created on first use (this node becomes an object).
    func member(_ key: String) -> EncodingNode {
        var keys: [String] = []
        var members: [String: EncodingNode] = [:]
        if case .object(let existingKeys, let existingMembers) = content {
            keys = existingKeys
            members = existingMembers
        }
        if let child = members[key] { return child }
        let child = EncodingNode(settings: settings)
        keys.append(key)
        members[key] = child
        content = .object(keys: keys, members: members)
        return child
    }

    func makeObject() {
        if case .object = content { return }
        content = .object(keys: [], members: [:])
    }

    func makeArray() {
        if case .array = content { return }
        content = .array([])
    }

    func appendElement() -> EncodingNode {
        let child = EncodingNode(settings: settings)
        if case .array(var nodes) = content {
            nodes.append(child)
            content = .array(nodes)
        } else {
            content = .array([child])
        }
        return child
    }

    var count: Int {
        switch content {
        case .array(let nodes): return nodes.count
        case .object(let keys, _): return keys.count
        default: return 0
        }
    }

    func encode<T: Encodable>(_ value: T, codingPath: [any CodingKey]) throws {
        if let scalar = try Self.scalar(value, codingPath: codingPath) {
            content = .scalar(scalar)
        } else {
            try value.encode(to: NodeEncoder(node: self, codingPath: codingPath))
        }
    }

    /// The standard library's scalars, written directly (they would otherwise ask a single
    /// value container for themselves).
    static func scalar<T: Encodable>(_ value: T, codingPath: [any CodingKey]) throws -> JSONValue? {
        switch value {
        case let string as String: return .string(string)
        case let flag as Bool: return .bool(flag)
        case let double as Double: return .number(try finite(double, value, codingPath))
        case let float as Float: return .number(try finite(Double(float), value, codingPath))
        case let integer as Int: return .number(JSONNumber(integer))
        case let integer as Int64: return .number(JSONNumber(integer))
        case let integer as Int32: return .number(JSONNumber(Int64(integer)))
        case let integer as Int16: return .number(JSONNumber(Int64(integer)))
        case let integer as Int8: return .number(JSONNumber(Int64(integer)))
        case let integer as UInt64: return .number(JSONNumber(integer))
        case let integer as UInt: return .number(JSONNumber(UInt64(integer)))
        case let integer as UInt32: return .number(JSONNumber(UInt64(integer)))
        case let integer as UInt16: return .number(JSONNumber(UInt64(integer)))
        case let integer as UInt8: return .number(JSONNumber(UInt64(integer)))
        case let json as JSONValue: return json
        default: return nil
        }
    }

    private static func finite(_ double: Double, _ value: Any, _ codingPath: [any CodingKey]) throws -> JSONNumber {
        guard let number = JSONNumber(double) else {
            throw EncodingError.invalidValue(value, .init(codingPath: codingPath, debugDescription: "JSON cannot carry \(double)"))
        }
        return number
    }
}

struct NodeEncoder: Encoder {
    let node: EncodingNode
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        node.makeObject()
        return KeyedEncodingContainer(KeyedNodeContainer<Key>(node: node, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        node.makeArray()
        return UnkeyedNodeContainer(node: node, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        SingleNodeContainer(node: node, codingPath: codingPath)
    }
}

struct KeyedNodeContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let node: EncodingNode
    let codingPath: [any CodingKey]

    private func member(_ key: Key) -> EncodingNode { node.member(node.settings.name(key.stringValue)) }

    mutating func encodeNil(forKey key: Key) throws { member(key).content = .scalar(.null) }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        try member(key).encode(value, codingPath: codingPath + [key])
    }

    // Synthesized `encode(to:)` writes optionals through these: a nil is left out, or written
    // as null when the encoder says so.
    mutating func encodeIfPresent<T: Encodable>(_ value: T?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else if node.settings.nulls { try encodeNil(forKey: key) }
    }
    mutating func encodeIfPresent(_ value: Bool?, forKey key: Key) throws { try encodeOptional(value, key) }
    mutating func encodeIfPresent(_ value: String?, forKey key: Key) throws { try encodeOptional(value, key) }
    mutating func encodeIfPresent(_ value: Double?, forKey key: Key) throws { try encodeOptional(value, key) }
    mutating func encodeIfPresent(_ value: Float?, forKey key: Key) throws { try encodeOptional(value, key) }
    mutating func encodeIfPresent(_ value: Int?, forKey key: Key) throws { try encodeOptional(value, key) }
    mutating func encodeIfPresent(_ value: Int8?, forKey key: Key) throws { try encodeOptional(value, key) }
    mutating func encodeIfPresent(_ value: Int16?, forKey key: Key) throws { try encodeOptional(value, key) }
    mutating func encodeIfPresent(_ value: Int32?, forKey key: Key) throws { try encodeOptional(value, key) }
    mutating func encodeIfPresent(_ value: Int64?, forKey key: Key) throws { try encodeOptional(value, key) }
    mutating func encodeIfPresent(_ value: UInt?, forKey key: Key) throws { try encodeOptional(value, key) }
    mutating func encodeIfPresent(_ value: UInt8?, forKey key: Key) throws { try encodeOptional(value, key) }
    mutating func encodeIfPresent(_ value: UInt16?, forKey key: Key) throws { try encodeOptional(value, key) }
    mutating func encodeIfPresent(_ value: UInt32?, forKey key: Key) throws { try encodeOptional(value, key) }
    mutating func encodeIfPresent(_ value: UInt64?, forKey key: Key) throws { try encodeOptional(value, key) }

    private mutating func encodeOptional<T: Encodable>(_ value: T?, _ key: Key) throws {
        if let value { try encode(value, forKey: key) } else if node.settings.nulls { try encodeNil(forKey: key) }
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<
        NestedKey
    > {
        NodeEncoder(node: member(key), codingPath: codingPath + [key]).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        NodeEncoder(node: member(key), codingPath: codingPath + [key]).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        NodeEncoder(node: node.member("super"), codingPath: codingPath + [JSONCodingKey.superKey])
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        NodeEncoder(node: member(key), codingPath: codingPath + [key])
    }
}

struct UnkeyedNodeContainer: UnkeyedEncodingContainer {
    let node: EncodingNode
    let codingPath: [any CodingKey]
    var count: Int { node.count }

    mutating func encodeNil() throws { node.appendElement().content = .scalar(.null) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        let path = codingPath + [JSONCodingKey(index: count)]
        try node.appendElement().encode(value, codingPath: path)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        let path = codingPath + [JSONCodingKey(index: count)]
        return NodeEncoder(node: node.appendElement(), codingPath: path).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let path = codingPath + [JSONCodingKey(index: count)]
        return NodeEncoder(node: node.appendElement(), codingPath: path).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        let path = codingPath + [JSONCodingKey(index: count)]
        return NodeEncoder(node: node.appendElement(), codingPath: path)
    }
}

struct SingleNodeContainer: SingleValueEncodingContainer {
    let node: EncodingNode
    let codingPath: [any CodingKey]

    mutating func encodeNil() throws { node.content = .scalar(.null) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        try node.encode(value, codingPath: codingPath)
    }
}
#endif
