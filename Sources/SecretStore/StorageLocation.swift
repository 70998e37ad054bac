/// Where items are, or would be, written.
public enum StorageLocation: Sendable, Hashable, CustomStringConvertible {
    /// A Secret Service collection. `isGroupCollection` is false when the item lives (or
    /// would live) in another collection, usually the default one — where a group's items
    /// are kept unless it has a collection of its own; `fallbackReason` says why, when
    /// creating the group's own collection was asked for and failed.
    case collection(
        label: String, objectPath: String, isGroupCollection: Bool, isLocked: Bool, fallbackReason: String? = nil)
    /// A file of a store that keeps files (``StoreKind/name`` in `store`): the plain file (not
    /// encrypted, only when chosen explicitly), or an encrypted one, which may be locked (the key
    /// to read it not unlocked).
    case file(store: String, path: String, encrypted: Bool, isLocked: Bool)
    /// The kernel's per-user persistent keyring (memory only): the group's keyring id, and
    /// the idle time after which the kernel drops it.
    case kernelKeyring(keyring: Int32, expirySeconds: Int?)

    /// True for the kernel keyring store.
    public var isKernelKeyring: Bool {
        if case .kernelKeyring = self { return true }
        return false
    }

    /// True for an unencrypted file: every status and login output must say so.
    public var isPlainFile: Bool {
        if case .file(_, _, false, _) = self { return true }
        return false
    }

    /// The plain-file store's file at `path`.
    public static func plainFile(path: String) -> StorageLocation {
        .file(store: PlainFileStore.name, path: path, encrypted: false, isLocked: false)
    }

    /// True when the items are in the collection labelled with the group name.
    public var isGroupCollection: Bool {
        if case .collection(_, _, let isGroupCollection, _, _) = self { return isGroupCollection }
        return false
    }

    /// Why the items are not in the group's own collection, and why creating one failed when
    /// that was asked for (e.g. the new-keyring dialog was dismissed): for logs.
    public var fallbackExplanation: String? {
        if case .collection(_, _, false, _, let reason) = self {
            return "the group's own collection is not used" + (reason.map { " (it could not be created: \($0))" } ?? "")
        }
        return nil
    }

    /// True when the collection (or encrypted file) holding the items is locked.
    public var isLocked: Bool {
        switch self {
        case .collection(_, _, _, let isLocked, _), .file(_, _, _, let isLocked): return isLocked
        case .kernelKeyring: return false
        }
    }

    /// What a report (`status --json`) says of a location: the same fields for every store,
    /// nil where a store has nothing to say; each store's location fills in its own.
    public struct Facts: Sendable, Hashable {
        /// The Secret Service collection's label.
        public var collection: String?
        /// Whether that collection is the group's own.
        public var groupCollection: Bool?
        /// Whether the collection or the encrypted store is locked.
        public var locked: Bool?
        /// The file or folder holding the items.
        public var path: String?
        /// Whether the items are encrypted at rest.
        public var encrypted: Bool
        /// The kernel keyring's id.
        public var keyring: Int32?
        /// Seconds unused after which the kernel drops the keyring.
        public var expirySeconds: Int?
        /// True when the items live in memory only and are gone at reboot.
        public var memoryOnly: Bool
    }

    /// The location's facts, for a report.
    public var facts: Facts {
        switch self {
        case .collection(let label, _, let isGroupCollection, let isLocked, _):
            return Facts(collection: label, groupCollection: isGroupCollection, locked: isLocked, encrypted: true, memoryOnly: false)
        case .file(_, let path, let isEncrypted, let isLocked):
            return Facts(locked: isEncrypted ? isLocked : nil, path: path, encrypted: isEncrypted, memoryOnly: false)
        case .kernelKeyring(let keyring, let expiry):
            // Kernel memory no other user can read; not encrypted against root (SECURITY.md).
            return Facts(encrypted: false, keyring: keyring, expirySeconds: expiry, memoryOnly: true)
        }
    }

    /// The name of the kind of store (``StoreKind/name``) that holds the items.
    public var storeName: String {
        switch self {
        case .collection: return SecretServiceStore.name
        case .kernelKeyring: return KernelKeyringStore.name
        case .file(let store, _, _, _): return store
        }
    }

    public var description: String {
        switch self {
        case .collection(let label, _, true, let isLocked, _):
            return "Secret Service collection ‘\(label)’" + (isLocked ? " (locked)" : "")
        case .collection(let label, let path, false, let isLocked, _):
            // Plain words for a person: the sign-in is encrypted in the user's
            // keyring; why the group's own collection is not used is ``fallbackExplanation``.
            let name = label.isEmpty ? path : label
            return "Secret Service keyring ‘\(name)’" + (isLocked ? " (locked)" : " (encrypted)")
        case .file(_, let path, false, _):
            return "PLAIN FILE \(path), not encrypted"
        case .file(let store, let path, true, let isLocked):
            let kind = StoreKinds.named(store)?.summary ?? store
            return "\(path) (\(kind))" + (isLocked ? " (locked)" : "")
        case .kernelKeyring(let keyring, let expiry):
            let idle = expiry.map { " or after \($0 >= 86_400 && $0 % 86_400 == 0 ? "\($0 / 86_400) days" : "\($0) s") unused" } ?? ""
            return "kernel keyring \(keyring) (memory only: gone at reboot\(idle))"
        }
    }
}

/// Where a group's items are or would be written, and whether that place is usable now.
public struct StorageStatus: Sendable, Hashable, CustomStringConvertible {
    /// The collection (or file) the next save writes to. When the group has no collection of
    /// its own, this is the default collection and ``groupCollectionExists`` is false (a save
    /// asks the provider to create one only when its store was told to).
    public var location: StorageLocation
    /// Whether a collection labelled with the group name exists.
    public var groupCollectionExists: Bool
    /// The program that owns `org.freedesktop.secrets` (e.g. `gnome-keyring-d`), when known.
    public var provider: String?
    /// How many items of the group exist, wherever they are.
    public var itemCount: Int

    /// A status (stores build it).
    public init(location: StorageLocation, groupCollectionExists: Bool, provider: String?, itemCount: Int) {
        self.location = location
        self.groupCollectionExists = groupCollectionExists
        self.provider = provider
        self.itemCount = itemCount
    }

    public var description: String {
        var text = location.description
        if !groupCollectionExists && !location.isPlainFile && !location.isKernelKeyring {
            text += "; the group has no collection of its own (the default one holds its items)"
        }
        if let provider { text += "; provider \(provider)" }
        return text + "; \(itemCount) item(s)"
    }
}
