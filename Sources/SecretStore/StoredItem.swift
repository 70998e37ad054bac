/// One item as found in a store.
public struct StoredItem: Sendable {
    /// The item's key, read back from its attributes. For an item with missing attributes
    /// (see ``problem``) the missing fields are empty.
    public var key: ItemKey
    /// The label shown in Seahorse and by `secret-tool search`.
    public var label: String
    /// The stored bytes; nil when not requested, when the item is locked, or unreadable.
    public var secret: [UInt8]?
    /// Where the item lives.
    public var location: StorageLocation
    /// Seconds since 1970, when the provider reports them.
    public var created: UInt64?
    /// When the item was last changed (seconds since 1970), if the store knows.
    public var modified: UInt64?
    /// Set when the item is ours but cannot be used as it is. Such items are reported, never
    /// deleted or overwritten behind the user's back (only ``SecretStore/delete(_:)`` of the
    /// key or ``SecretStore/deleteAll(in:)`` removes them).
    public var problem: ItemProblem?

    /// An item as a store found it (stores build them).
    public init(
        key: ItemKey, label: String, secret: [UInt8]?, location: StorageLocation, created: UInt64? = nil,
        modified: UInt64? = nil, problem: ItemProblem? = nil
    ) {
        self.key = key
        self.label = label
        self.secret = secret
        self.location = location
        self.created = created
        self.modified = modified
        self.problem = problem
    }

    /// The secret of a sound item.
    /// - Throws: ``SecretStoreError/corruptItem(_:reason:)`` when the item has a ``problem``
    ///   or its secret was not loaded.
    public func validatedSecret() throws(SecretStoreError) -> [UInt8] {
        if let problem { throw .corruptItem(label, reason: problem.description) }
        guard let secret else { throw .corruptItem(label, reason: "its secret was not loaded") }
        return secret
    }
}

/// Why a stored item of ours cannot be used. Never contains any of the secret's bytes.
public enum ItemProblem: Sendable, Hashable, CustomStringConvertible {
    /// Attributes authkit always writes are absent (the item was written by another program).
    case missingAttributes([String])
    /// The secret is not UTF-8 text, so it cannot be the JSON record authkit writes.
    case secretNotText
    /// The item was written with a record format this version does not know.
    case unsupportedFormat(String)
    /// Others may read the item and its permissions could not be narrowed again (the kernel
    /// keyring: owner and permissions as the kernel reports them); its record is not read.
    case exposed(String)
    /// An encrypted file that does not open, or opens to what was not written there (another
    /// group's or another item's record, a damaged or altered file, a link, another user's
    /// file): refused and never served, left in place.
    case refused(String)

    public var description: String {
        switch self {
        case .missingAttributes(let names):
            return "the attribute(s) \(names.joined(separator: ", ")) are missing"
        case .secretNotText:
            return "its secret is not UTF-8 text"
        case .unsupportedFormat(let format):
            return "it has record format \(format), which this version of authkit does not read (a newer version wrote it)"
        case .refused(let reason):
            return "the file was refused: \(reason); remove it with `authkit logout` and sign in again"
        case .exposed(let detail):
            return
                "other users may be able to read it (\(detail)) and its permissions cannot be narrowed; remove it with `authkit logout` and sign in again"
        }
    }
}
