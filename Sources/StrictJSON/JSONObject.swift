/// A JSON object: members in document order, each name at most once.
///
/// Lookup is a linear scan, which beats hashing for the small objects authkit reads (a JOSE
/// header has a handful of members, an id_token a few dozen, a token-file entry nine).
/// Equality ignores member order, as JSON does.
public struct JSONObject: Sendable, Hashable, RandomAccessCollection, ExpressibleByDictionaryLiteral {
    public typealias Element = (key: String, value: JSONValue)
    public typealias Index = Int

    // Usable from inline so that the key subscript inlines into callers in other modules
    // (JOSE looks up header and claim members on every token).
    @usableFromInline var members: [Element]

    /// An empty object.
    public init() { members = [] }

    /// An object from members the caller knows to have distinct names (the parser).
    init(uniqueMembers: [Element]) { members = uniqueMembers }

    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        members = []
        for (key, value) in elements { self[key] = value }
    }

    public var startIndex: Int { members.startIndex }
    public var endIndex: Int { members.endIndex }
    public subscript(position: Int) -> Element { members[position] }

    /// The member names, in order.
    public var keys: [String] { members.map { $0.key } }

    /// The value of member `key`; setting `nil` removes the member, setting a new name appends it.
    @inlinable
    public subscript(key: String) -> JSONValue? {
        get {
            for member in members where member.key == key { return member.value }
            return nil
        }
        set {
            if let index = members.firstIndex(where: { $0.key == key }) {
                if let newValue {
                    members[index].value = newValue
                } else {
                    members.remove(at: index)
                }
            } else if let newValue {
                members.append((key, newValue))
            }
        }
    }

    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        guard lhs.count == rhs.count else { return false }
        for (key, value) in lhs.members where rhs[key] != value { return false }
        return true
    }

    public func hash(into hasher: inout Hasher) {
        // Order-independent, to agree with ==: combine each member's own hash commutatively.
        var combined = 0
        for (key, value) in members {
            var memberHasher = Hasher()
            memberHasher.combine(key)
            memberHasher.combine(value)
            combined = combined &+ memberHasher.finalize()
        }
        hasher.combine(members.count)
        hasher.combine(combined)
    }
}
