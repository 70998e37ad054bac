/// What identifies one stored item: one account's record for one client of one issuer, in
/// one group.
///
/// Every field is stored in clear as a Secret Service attribute (`group`, `issuer`,
/// `client_id`, `account`, `kind`), so nothing secret may go here. `kind` tells apart
/// records of different shapes for the same account (AuthKit uses `tokens`).
public struct ItemKey: Sendable, Hashable, CustomStringConvertible {
    /// The group the item belongs to.
    public var group: SecretGroup
    /// The issuer of the sign-in.
    public var issuer: String
    /// The client id of the sign-in.
    public var clientID: String
    /// The account name.
    public var account: String
    /// What the item holds (authkit stores `tokens`).
    public var kind: String

    /// The key of one item: group, issuer, client id, account and kind.
    public init(group: SecretGroup, issuer: String, clientID: String, account: String, kind: String) {
        self.group = group
        self.issuer = issuer
        self.clientID = clientID
        self.account = account
        self.kind = kind
    }

    /// A label a person recognises in Seahorse:
    /// `authkit: ada@contoso.com @ login.microsoftonline.com (com.example.shared)`.
    public var defaultLabel: String {
        "authkit: \(account) @ \(Self.host(of: issuer)) (\(group.name))"
    }

    /// `account @ issuer-host (group)`, fit for messages (no secrets in a key).
    public var description: String {
        "\(account) @ \(Self.host(of: issuer)) (\(group.name), \(kind))"
    }

    /// Checks the fields before they become attributes: non-empty, at most 1024 bytes, no
    /// control characters (they would garble labels, messages and `secret-tool` output).
    public func validate() throws(SecretStoreError) {
        for (field, value) in [("issuer", issuer), ("client_id", clientID), ("account", account), ("kind", kind)] {
            if value.isEmpty { throw .invalidKey(field: field, reason: "it is empty") }
            if value.utf8.count > 1024 { throw .invalidKey(field: field, reason: "it is longer than 1024 bytes") }
            if value.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
                throw .invalidKey(field: field, reason: "it contains a control character")
            }
        }
    }

    /// The host of an issuer URL (`https://login.microsoftonline.com/{tid}/v2.0` →
    /// `login.microsoftonline.com`), or the issuer itself when it is not a URL.
    static func host(of issuer: String) -> String {
        // Hand-rolled rather than `firstRange(of:)`, which links the regex engine into every binary.
        let utf8 = Array(issuer.utf8)
        guard
            let schemeEnd = utf8.indices.dropLast(2).first(where: {
                utf8[$0] == UInt8(ascii: ":") && utf8[$0 + 1] == UInt8(ascii: "/") && utf8[$0 + 2] == UInt8(ascii: "/")
            })
        else { return issuer }
        var rest = Substring(String(decoding: utf8[(schemeEnd + 3)...], as: UTF8.self))
        if let slash = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) { rest = rest[..<slash] }
        if let at = rest.lastIndex(of: "@") { rest = rest[rest.index(after: at)...] }
        return rest.isEmpty ? issuer : String(rest)
    }
}

/// Which items to list or delete: all of a group, optionally narrowed by the other fields.
public struct ItemQuery: Sendable, Hashable {
    /// The group to search.
    public var group: SecretGroup
    /// Only items of this issuer, if set.
    public var issuer: String?
    /// Only items of this client id, if set.
    public var clientID: String?
    /// Only items of this account, if set.
    public var account: String?
    /// Only items of this kind, if set.
    public var kind: String?

    /// A search in `group`, narrowed by the fields that are set.
    public init(
        group: SecretGroup, issuer: String? = nil, clientID: String? = nil, account: String? = nil,
        kind: String? = nil
    ) {
        self.group = group
        self.issuer = issuer
        self.clientID = clientID
        self.account = account
        self.kind = kind
    }

    /// The query that matches exactly `key`.
    public init(_ key: ItemKey) {
        self.init(group: key.group, issuer: key.issuer, clientID: key.clientID, account: key.account, kind: key.kind)
    }

    /// Whether `key` satisfies every filter that is set.
    public func matches(_ key: ItemKey) -> Bool {
        key.group == group && (issuer == nil || issuer == key.issuer) && (clientID == nil || clientID == key.clientID)
            && (account == nil || account == key.account) && (kind == nil || kind == key.kind)
    }
}
