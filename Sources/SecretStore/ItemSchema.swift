/// The stable layout of authkit's items, shared by the Secret Service and the plain file.
/// Documented in docs/secret-store.md: other programs read it, so nothing here changes.
public enum ItemSchema {
    /// The libsecret schema name, stored by libsecret as the `xdg:schema` attribute.
    public static let name = "io.github.authkit.Token"
    /// The record-format attribute: which layout the secret has. Readers skip nothing; an
    /// item with a format they do not know is reported as ``ItemProblem/unsupportedFormat(_:)``.
    public static let formatAttribute = "format"
    /// The format this version writes.
    public static let format = "1"
    /// The attributes every item carries (besides `xdg:schema` and `format`).
    public static let keyAttributes = ["group", "issuer", "client_id", "account", "kind"]
    /// libsecret's own attribute naming the schema.
    static let schemaAttribute = "xdg:schema"

    /// The attributes stored for `key`.
    static func attributes(for key: ItemKey) -> [(String, String)] {
        [
            ("group", key.group.name), ("issuer", key.issuer), ("client_id", key.clientID),
            ("account", key.account), ("kind", key.kind), (formatAttribute, format),
        ]
    }

    /// The attributes to search for `query` (format is left out: old and new formats match).
    static func attributes(for query: ItemQuery) -> [(String, String)] {
        var result = [("group", query.group.name)]
        if let issuer = query.issuer { result.append(("issuer", issuer)) }
        if let clientID = query.clientID { result.append(("client_id", clientID)) }
        if let account = query.account { result.append(("account", account)) }
        if let kind = query.kind { result.append(("kind", kind)) }
        return result
    }

    /// Rebuilds a key from stored attributes, and says what is wrong with them if anything.
    static func key(
        from attributes: [String: String], group: SecretGroup, secret: [UInt8]?
    ) -> (ItemKey, ItemProblem?) {
        let key = ItemKey(
            group: group, issuer: attributes["issuer"] ?? "", clientID: attributes["client_id"] ?? "",
            account: attributes["account"] ?? "", kind: attributes["kind"] ?? "")
        let missing = ["issuer", "client_id", "account", "kind"].filter { (attributes[$0] ?? "").isEmpty }
        if !missing.isEmpty { return (key, .missingAttributes(missing)) }
        if let format = attributes[formatAttribute], format != Self.format { return (key, .unsupportedFormat(format)) }
        if let secret, !isUTF8(secret) { return (key, .secretNotText) }
        return (key, nil)
    }

    /// What every store checks before it writes anything: a valid key and a secret that is
    /// non-empty UTF-8 text — an item every store reads back as sound.
    package static func checkSave(_ secret: [UInt8], for key: ItemKey) throws(SecretStoreError) {
        try key.validate()
        guard !secret.isEmpty else { throw .invalidSecret(reason: "it is empty") }
        guard isUTF8(secret) else { throw .invalidSecret(reason: "it is not UTF-8 text") }
    }

    static func isUTF8(_ bytes: [UInt8]) -> Bool {
        var iterator = bytes.makeIterator()
        var decoder = UTF8()
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue: continue
            case .emptyInput: return true
            case .error: return false
            }
        }
    }
}
