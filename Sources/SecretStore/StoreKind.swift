import Synchronization

/// A kind of store, described by the store's own type: everything the rest of authkit needs
/// to know of it — its name on the command line, in the config file, the storage record and
/// the agent's wire; its words in `--help` and `status`; how the agent treats what it read —
/// so that adding a store is one folder plus one line in ``StoreKinds/all``.
public protocol StoreKind: SecretStore {
    /// The store's name everywhere a person or a file names it (`--storage NAME`,
    /// `storage = NAME`, `AUTHKIT_STORAGE`), e.g. `kernel-keyring`.
    static var name: String { get }
    /// What `--storage NAME` means, in a few words for `--help` (e.g. "memory only; SSH,
    /// servers, CI").
    static var summary: String { get }
    /// True when the store keeps secrets unencrypted: chosen only explicitly
    /// (`--insecure-storage`), and every output that shows it says so.
    static var isPlainText: Bool { get }
    /// How long the agent may hand out a token it read from this store before reading the
    /// store again (nil: the agent's default; 0: on every request, for a store that is as
    /// fast to read as the agent's memory).
    static var agentRecheckInterval: Double? { get }
    /// A store of this kind. `prompts` says which dialogs it may cause: only a command a
    /// person runs passes more than ``SecretServiceStore/PromptPolicy/never``.
    static func make(prompts: SecretServiceStore.PromptPolicy) -> any SecretStore
}

/// The kinds of store, in the order `--help` lists them; the first is the default.
public enum StoreKinds {
    /// The one list of the stores authkit ships: every name, help text, status and agent rule
    /// derives from it (and from ``register(_:)``'s additions).
    static let builtIn: [any StoreKind.Type] = [
        SecretServiceStore.self,
        KernelKeyringStore.self,
        PlainFileStore.self,
        EncryptedFileStore.self,
    ]

    private static let registered = Mutex<[any StoreKind.Type]>([])

    /// Every kind of store: the built-in ones, then those registered, in order.
    public static var all: [any StoreKind.Type] {
        builtIn + registered.withLock { $0 }
    }

    /// Adds a kind of store from outside this module (a test target's toy store): from then
    /// on it is a `--storage` choice like the built-in ones. A name already taken is ignored.
    package static func register(_ kind: any StoreKind.Type) {
        registered.withLock { list in
            guard !(builtIn + list).contains(where: { $0.name == kind.name }) else { return }
            list.append(kind)
        }
    }

    /// The kind named `name`, or nil.
    public static func named(_ name: String) -> (any StoreKind.Type)? {
        all.first { $0.name == name }
    }

    /// The kind of `store`, or nil for a store of a tool's own.
    public static func of(_ store: any SecretStore) -> (any StoreKind.Type)? {
        type(of: store) as? any StoreKind.Type
    }
}
