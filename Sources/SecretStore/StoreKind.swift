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
    /// A store of this kind. `context` says which of its own dialogs it may cause: only a
    /// command a person runs passes more than ``StoreContext/background``.
    static func make(_ context: StoreContext) -> any SecretStore
}

/// The kinds of store, in the order `--help` lists them; the first is the default.
public enum StoreKinds {
    /// The one list of the stores authkit ships: every name, help text, status and agent rule
    /// derives from it (and from the kinds ``added`` for a task).
    static let builtIn: [any StoreKind.Type] = [
        SecretServiceStore.self,
        KernelKeyringStore.self,
        PlainFileStore.self,
        EncryptedFileStore.self,
    ]

    /// Kinds of store from outside this module — a test target's toy store — for the task
    /// that sets them and its child tasks: `StoreKinds.$added.withValue([ToyStore.self]) { … }`.
    /// For tests: a thread of its own or a detached task does not see them (there the name is
    /// no choice at all).
    /// Within it each is a `--storage` choice like the built-in ones; a name already taken stays
    /// the first store's that took it. Scoped to a task, so no other task (another test) sees it.
    @TaskLocal package static var added: [any StoreKind.Type] = []

    /// Every kind of store: the built-in ones, then those ``added`` for this task, in order.
    public static var all: [any StoreKind.Type] {
        let added = Self.added
        guard !added.isEmpty else { return builtIn }
        var kinds = builtIn
        for kind in added where !kinds.contains(where: { $0.name == kind.name }) { kinds.append(kind) }
        return kinds
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
