internal import StrictJSON

/// The layout of a plain-file store file (documented in docs/secret-store.md):
///
/// ```json
/// {"schema":"io.github.authkit.Token","group":"com.example.shared","items":[
///   {"issuer":"…","client_id":"…","account":"…","kind":"tokens","format":"1",
///    "label":"authkit: …","created":1763750000,"modified":1763750000,"secret":"<the record, as a JSON string>"}]}
/// ```
enum PlainFileFormat {
    /// One item of the file. An entry with a problem keeps its original JSON, so that
    /// rewriting the file for another item never changes it.
    struct Entry {
        var item: StoredItem
        var original: JSONValue?
    }

    static func encode(_ entries: [Entry], group: SecretGroup) -> String {
        let items = entries.map { entry -> JSONValue in
            if entry.item.problem != nil, let original = entry.original { return original }
            let record = entry.item
            var members: JSONObject = [
                "issuer": .string(record.key.issuer), "client_id": .string(record.key.clientID),
                "account": .string(record.key.account), "kind": .string(record.key.kind),
                ItemSchema.formatAttribute: .string(ItemSchema.format), "label": .string(record.label),
            ]
            if let created = record.created { members["created"] = .number(JSONNumber(created)) }
            if let modified = record.modified { members["modified"] = .number(JSONNumber(modified)) }
            members["secret"] = .string(String(decoding: record.secret ?? [], as: UTF8.self))
            return .object(members)
        }
        let root: JSONValue = ["schema": .string(ItemSchema.name), "group": .string(group.name), "items": .array(items)]
        return root.serialized() + "\n"
    }

    static func decode(_ bytes: [UInt8], group: SecretGroup, path: String) throws(SecretStoreError) -> [Entry] {
        let root: JSONValue
        do {
            root = try JSONValue(parsing: bytes, limits: limits)
        } catch {
            throw .plainFileCorrupt(path: path, reason: "\(error)")
        }
        guard root["schema"]?.stringValue == ItemSchema.name, case .array(let entries)? = root["items"] else {
            throw .plainFileCorrupt(path: path, reason: "it is not an authkit token file")
        }
        return entries.map { entry in
            var attributes: [String: String] = [:]
            for name in ["issuer", "client_id", "account", "kind", ItemSchema.formatAttribute] {
                if let value = entry[name]?.stringValue { attributes[name] = value }
            }
            let secret = entry["secret"]?.stringValue.map { Array($0.utf8) }
            var (key, problem) = ItemSchema.key(from: attributes, group: group, secret: secret)
            if problem == nil, secret == nil { problem = .missingAttributes(["secret"]) }
            let item = StoredItem(
                key: key, label: entry["label"]?.stringValue ?? "", secret: problem == nil ? secret : nil,
                location: .plainFile(path: path), created: unixTime(entry["created"]), modified: unixTime(entry["modified"]),
                problem: problem)
            return Entry(item: item, original: entry)
        }
    }

    /// PlainFileStore stops reading a file at 16 MiB, so that is the document limit too.
    static let limits = JSONLimits(maximumBytes: 16 << 20)

    /// A `created`/`modified` time: a whole, non-negative number of seconds.
    private static func unixTime(_ value: JSONValue?) -> UInt64? {
        value?.int64Value.flatMap { UInt64(exactly: $0) }
    }
}
