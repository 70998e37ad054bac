/// HTTP header fields in order, with case-insensitive lookup.
public struct HTTPHeaders: Sendable, Equatable, Sequence {
    /// The fields in the order they were added; names keep their case.
    public private(set) var fields: [(name: String, value: String)]

    /// Headers with these fields.
    public init(_ fields: [(name: String, value: String)] = []) {
        self.fields = fields
    }

    public static func == (lhs: HTTPHeaders, rhs: HTTPHeaders) -> Bool {
        lhs.fields.elementsEqual(rhs.fields) { $0.name == $1.name && $0.value == $1.value }
    }

    /// The first value of the named field.
    public subscript(name: String) -> String? {
        let wanted = name.lowercased()
        return fields.first { $0.name.lowercased() == wanted }?.value
    }

    /// Every value of the named field, in order.
    public func values(_ name: String) -> [String] {
        let wanted = name.lowercased()
        return fields.filter { $0.name.lowercased() == wanted }.map(\.value)
    }

    /// Appends a field (a name may repeat).
    public mutating func add(_ name: String, _ value: String) {
        fields.append((name, value))
    }

    /// Removes every field of that name, then adds one.
    public mutating func replace(_ name: String, with value: String) {
        let wanted = name.lowercased()
        fields.removeAll { $0.name.lowercased() == wanted }
        fields.append((name, value))
    }

    public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> {
        fields.makeIterator()
    }
}

extension HTTPHeaders: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The field names only: values carry tokens (`Authorization`, `DPoP`, cookies), so
    /// `print`, `dump` and string interpolation never show one.
    public var description: String { "[" + fields.map(\.name).joined(separator: ", ") + "]" }
    /// The same as ``description``.
    public var debugDescription: String { description }
    /// The field names only, as ``description``.
    public var customMirror: Mirror { Mirror(self, children: ["names": fields.map(\.name)]) }
}
