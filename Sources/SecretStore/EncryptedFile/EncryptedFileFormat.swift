internal import StrictJSON

/// The plaintext of one encrypted item file (documented in docs/secret-store.md): the item's
/// whole key — the group too — beside its record, so that a file is checked against the place
/// it was found in and a file moved from another group or over another item is refused.
///
/// ```json
/// {"schema":"io.github.authkit.Token","store":"encrypted-file","group":"com.example.shared",
///  "issuer":"…","client_id":"…","account":"…","kind":"tokens","format":"1","label":"authkit: …",
///  "created":1763750000,"modified":1763750000,"secret":"<the record, as a JSON string>"}
/// ```
enum EncryptedFileFormat {
    static func encode(_ item: StoredItem) -> [UInt8] {
        var members: JSONObject = [
            "schema": .string(ItemSchema.name), "store": .string(EncryptedFileStore.name), "group": .string(item.key.group.name),
            "issuer": .string(item.key.issuer), "client_id": .string(item.key.clientID), "account": .string(item.key.account),
            "kind": .string(item.key.kind), ItemSchema.formatAttribute: .string(ItemSchema.format), "label": .string(item.label),
        ]
        if let created = item.created { members["created"] = .number(JSONNumber(created)) }
        if let modified = item.modified { members["modified"] = .number(JSONNumber(modified)) }
        members["secret"] = .string(String(decoding: item.secret ?? [], as: UTF8.self))
        return JSONValue.object(members).serializedBytes()
    }

    /// The item in `plaintext`, found as the file `name` of `group`'s folder.
    static func decode(_ plaintext: [UInt8], group: SecretGroup, name: String, location: StorageLocation) -> StoredItem {
        let unknown = ItemKey(group: group, issuer: "", clientID: "", account: "", kind: "")
        func refused(_ reason: String) -> StoredItem {
            StoredItem(key: unknown, label: name, secret: nil, location: location, problem: .refused(reason))
        }
        guard let root = try? JSONValue(parsing: plaintext, limits: JSONLimits(maximumBytes: TrustedFile.maximumBytes)),
            root["schema"]?.stringValue == ItemSchema.name
        else { return refused("it opens, but not to an authkit record") }
        guard root["group"]?.stringValue == group.name else {
            return refused("it belongs to the group ‘\(root["group"]?.stringValue ?? "?")’, not ‘\(group.name)’ (moved or copied here)")
        }
        var attributes: [String: String] = [:]
        for field in ["issuer", "client_id", "account", "kind", ItemSchema.formatAttribute] {
            if let value = root[field]?.stringValue { attributes[field] = value }
        }
        let secret = root["secret"]?.stringValue.map { Array($0.utf8) }
        var (key, problem) = ItemSchema.key(from: attributes, group: group, secret: secret)
        if problem == nil, secret == nil { problem = .missingAttributes(["secret"]) }
        if problem == nil, EncryptedFileStore.fileName(for: key) != name {
            return refused("it holds another item's record (renamed or copied over \(name))")
        }
        return StoredItem(
            key: key, label: root["label"]?.stringValue ?? key.defaultLabel, secret: problem == nil ? secret : nil,
            location: location, created: unixTime(root["created"]), modified: unixTime(root["modified"]), problem: problem)
    }

    private static func unixTime(_ value: JSONValue?) -> UInt64? {
        value?.int64Value.flatMap { UInt64(exactly: $0) }
    }
}
