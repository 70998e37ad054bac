/// What a store may do beyond reading and writing, said for every kind of store: whether a
/// person waits for the command and may answer the store's own dialogs — a keyring's unlock, a
/// new keyring's password — or nobody does (a refresh in the background, a credential plug-in,
/// the agent), and then a store that would need a dialog answers "locked" instead.
public struct StoreContext: Sendable, Hashable {
    /// Which of its own dialogs a store may cause.
    public enum Dialogs: Sendable, Hashable {
        /// None: nobody is there to answer.
        case none
        /// The unlock of what is locked: a command a person runs.
        case unlock
        /// As ``unlock``, and the making of a store of the group's own, asked once (a sign-in
        /// whose person asked for one).
        case unlockAndCreateOwn
    }

    /// Which of its own dialogs a store may cause.
    public var dialogs: Dialogs

    /// A context allowing `dialogs`.
    public init(dialogs: Dialogs) { self.dialogs = dialogs }

    /// Nobody to answer a dialog: the default everywhere.
    public static let background = StoreContext(dialogs: .none)
    /// A command a person runs at a terminal or desktop.
    public static let person = StoreContext(dialogs: .unlock)
    /// A sign-in that asked for a store of the group's own (`login --own-keyring`).
    public static let signInWithOwnStore = StoreContext(dialogs: .unlockAndCreateOwn)
}
