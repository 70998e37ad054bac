import Synchronization

extension SecretServiceStore {
    /// Which of the provider's own dialogs a store may cause. A dialog is only for a person
    /// who started a command and waits for it: never for a refresh in the background, a
    /// credential plug-in or an agent, which get ``SecretStoreError/locked(collection:)`` instead.
    public enum PromptPolicy: Sendable, Hashable {
        /// No dialog at all, the default: a locked collection is
        /// ``SecretStoreError/locked(collection:)`` at once, and a group without a collection
        /// of its own keeps its items in the default collection.
        case never
        /// The provider may ask for the password of a locked collection: for commands a
        /// person runs (sign in, sign out, status, a token at the terminal).
        case unlock
        /// As ``unlock``, and the group's own collection (labelled with the group name, with
        /// a password of its own) is created when it does not exist — a new-keyring dialog.
        /// Asked at most once per store and group, by ``SecretServiceStore/prepareToSave(in:)``
        /// or else the first save; a dismissal is remembered and the items go to the default
        /// collection (``StorageLocation/fallbackExplanation`` says why). Only for a sign-in
        /// whose user asked for a collection of the group's own.
        case unlockAndCreateCollection

        var allowsUnlock: Bool { self != .never }

        /// The dialogs a store may cause, in the Secret Service's terms.
        public init(_ context: StoreContext) {
            switch context.dialogs {
            case .none: self = .never
            case .unlock: self = .unlock
            case .unlockAndCreateOwn: self = .unlockAndCreateCollection
            }
        }
        var allowsCreation: Bool { self == .unlockAndCreateCollection }
    }
}

/// The group collections a store has asked the provider to create: each at most once, and
/// why a creation failed, so the next save neither asks again nor loses the reason.
final class CollectionCreations: Sendable {
    private let attempts = Mutex<[String: String?]>([:])

    /// True the first time for `group` (the caller then asks the provider), false after.
    func claim(_ group: String) -> Bool {
        attempts.withLock { attempts in
            guard attempts[group] == nil else { return false }
            attempts[group] = .some(nil)
            return true
        }
    }

    /// Records why creating `group`'s collection failed.
    func failed(_ group: String, reason: String) {
        attempts.withLock { $0[group] = .some(reason) }
    }

    /// Why creating `group`'s collection failed, when it was asked and failed.
    func failure(of group: String) -> String? {
        attempts.withLock { $0[group] ?? nil }
    }
}

extension SecretServiceStore {
    static func createGroupCollection(
        _ group: String, _ creation: CollectionCreations, _ options: LibSecretOptions, _ thread: LibSecretThread
    ) throws(SecretStoreError) -> FoundCollection? {
        guard creation.claim(group) else { return nil }
        do {
            return try thread.session.createCollection(group, options, thread)
        } catch {
            switch error {
            case .noSessionBus, .noSecretService: throw error
            default:
                creation.failed(group, reason: reason(creationFailed: error))
                return nil
            }
        }
    }

    static func reason(creationFailed error: SecretStoreError) -> String {
        switch error {
        case .timedOut(_, let seconds):
            return "the provider's prompt was not answered within \(Int(seconds)) s"
        case .providerFailure(_, let message) where message.hasPrefix("No such secret collection"):
            return "the provider's password prompt was dismissed or could not be shown (no display?)"
        case .providerFailure(_, let message):
            return "the provider refused: \(message)"
        default:
            return error.description
        }
    }
}
