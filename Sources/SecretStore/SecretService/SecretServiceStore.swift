/// The shared sign-in store: the freedesktop Secret Service (gnome-keyring, KeePassXC,
/// ksecretd) through libsecret.
///
/// Items of a group carry the `group` attribute and live in the collection whose **label** is
/// the group name when one exists, else in the provider's **default collection** (the login
/// keyring a desktop unlocks at login) — as an Apple keychain access group is an attribute of
/// items in one keychain. Reads search every collection by attributes, so an item is found
/// wherever it is.
///
/// The store causes the provider's dialogs only as its ``PromptPolicy`` allows: by default
/// none, so a refresh, a credential plug-in or an agent never shows one (a locked collection
/// is ``SecretStoreError/locked(collection:)``). A command a person runs passes
/// ``PromptPolicy/unlock``; only a sign-in that asked for a collection of the group's own
/// passes ``PromptPolicy/unlockAndCreateCollection``, and then the collection is asked for at
/// most once (``prepareToSave(in:)`` does it before the sign-in starts). A collection created
/// with its own password stays locked in the next desktop session until someone unlocks it,
/// which is why it is not the default.
///
/// Every libsecret call runs on one dedicated thread of the process and is bounded by
/// `timeout` (prompts by `promptTimeout`): a hung provider gives
/// ``SecretStoreError/timedOut(operation:seconds:)``, never a hang.
public final class SecretServiceStore: SecretStore {
    /// The bound for one exchange with the provider.
    public let timeout: Duration
    /// The bound for a provider's prompt (unlocking a collection, creating one).
    public let promptTimeout: Duration
    /// Which of the provider's dialogs this store may cause.
    public let prompts: PromptPolicy
    private let creations = CollectionCreations()
    /// Where a save records its one creation of a group collection; nil when the policy
    /// allows none.
    private var creation: CollectionCreations? { prompts.allowsCreation ? creations : nil }

    private var options: LibSecretOptions {
        LibSecretOptions(timeout: timeout, promptTimeout: promptTimeout, allowsPrompts: prompts.allowsUnlock)
    }

    /// A store in the session's Secret Service.
    /// - Parameters:
    ///   - timeout: The bound on each D-Bus call.
    ///   - promptTimeout: The bound on an unlock or create prompt a person answers.
    ///   - prompts: Which of the provider's dialogs the store may cause; by default none.
    public init(timeout: Duration = .seconds(5), promptTimeout: Duration = .seconds(120), prompts: PromptPolicy = .never) {
        self.timeout = timeout
        self.promptTimeout = promptTimeout
        self.prompts = prompts
    }

    public nonisolated(nonsending) func items(matching query: ItemQuery, loadSecrets: Bool) async throws(SecretStoreError) -> [StoredItem] {
        let options = self.options
        return try await LibSecretThread.shared.run { thread throws(SecretStoreError) in
            try Self.items(matching: query, loadSecrets: loadSecrets, options, thread)
        }
    }

    public nonisolated(nonsending) func groups(holding kind: String) async throws(SecretStoreError) -> [SecretGroup] {
        let options = self.options
        return try await LibSecretThread.shared.run { thread throws(SecretStoreError) in
            let session = thread.session
            let (found, _) = try session.search([("kind", kind)], loadSecrets: false, options, thread)
            var groups: [String: SecretGroup] = [:]
            for item in found {
                guard let name = item.attributes["group"], let group = try? SecretGroup(name),
                    ItemSchema.key(from: item.attributes, group: group, secret: nil).1 == nil
                else { continue }
                groups[name] = group
            }
            return groups.values.sorted { $0.name < $1.name }
        }
    }

    @discardableResult
    public nonisolated(nonsending) func save(_ secret: [UInt8], for key: ItemKey, label: String) async throws(SecretStoreError)
        -> StorageLocation
    {
        try ItemSchema.checkSave(secret, for: key)
        let label = label.isEmpty ? key.defaultLabel : label
        let (options, creation) = (self.options, self.creation)
        return try await LibSecretThread.shared.run { thread throws(SecretStoreError) in
            try Self.save(secret, for: key, label: label, creation, options, thread)
        }
    }

    @discardableResult
    public nonisolated(nonsending) func delete(_ key: ItemKey) async throws(SecretStoreError) -> Bool {
        let options = self.options
        return try await LibSecretThread.shared.run { thread throws(SecretStoreError) in
            try Self.delete(ItemSchema.attributes(for: ItemQuery(key)), options, thread) > 0
        }
    }

    @discardableResult
    public nonisolated(nonsending) func deleteAll(in group: SecretGroup) async throws(SecretStoreError) -> Int {
        let options = self.options
        return try await LibSecretThread.shared.run { thread throws(SecretStoreError) in
            try Self.delete(ItemSchema.attributes(for: ItemQuery(group: group)), options, thread)
        }
    }

    public nonisolated(nonsending) func storageStatus(for group: SecretGroup) async throws(SecretStoreError) -> StorageStatus {
        let (options, creations) = (self.options, self.creations)
        return try await LibSecretThread.shared.run { thread throws(SecretStoreError) in
            try Self.status(for: group, failedCreation: creations.failure(of: group.name), options, thread)
        }
    }

    /// The collection a save would write to, ready now: with
    /// ``PromptPolicy/unlockAndCreateCollection`` the group's own collection is created if it
    /// does not exist (the provider's new-keyring dialog; a failure leaves the default
    /// collection, with the reason in the location), and a locked collection is unlocked (the
    /// provider's password dialog) — before a sign-in starts, not after it. Without a policy
    /// that allows the dialog, a locked collection is ``SecretStoreError/locked(collection:)``.
    public nonisolated(nonsending) func prepareToSave(in group: SecretGroup) async throws(SecretStoreError) -> StorageStatus {
        let (options, creations, creation) = (self.options, self.creations, self.creation)
        return try await LibSecretThread.shared.run { thread throws(SecretStoreError) in
            var status = try Self.status(for: group, failedCreation: creations.failure(of: group.name), options, thread)
            if !status.groupCollectionExists, let creation {
                _ = try Self.createGroupCollection(group.name, creation, options, thread)
                status = try Self.status(for: group, failedCreation: creations.failure(of: group.name), options, thread)
            }
            guard case .collection(_, let path, _, true, _) = status.location else { return status }
            let collections = try thread.session.collections(options, thread)
            try Self.unlock([path], collections, options, thread)
            return try Self.status(for: group, failedCreation: creations.failure(of: group.name), options, thread)
        }
    }
}

// MARK: - On the libsecret thread

extension SecretServiceStore {
    private static func items(
        matching query: ItemQuery, loadSecrets: Bool, _ options: LibSecretOptions, _ thread: LibSecretThread
    ) throws(SecretStoreError) -> [StoredItem] {
        let session = thread.session
        let attributes = ItemSchema.attributes(for: query)
        var (found, collections) = try session.search(
            attributes, loadSecrets: loadSecrets, options, thread)
        if loadSecrets, found.contains(where: \.isLocked) {
            try unlock(found.filter(\.isLocked).map(\.collectionPath), collections, options, thread)
            (found, collections) = try session.search(
                attributes, loadSecrets: true, options, thread)
            if let stillLocked = found.first(where: \.isLocked) {
                throw .locked(collection: label(of: stillLocked.collectionPath, in: collections))
            }
        }
        var best: [ItemKey: StoredItem] = [:]
        var withProblems: [StoredItem] = []
        for item in found {
            let stored = storedItem(item, query: query, collections: collections)
            guard stored.problem == nil else {
                withProblems.append(stored)
                continue
            }
            if let current = best[stored.key], !isPreferred(stored, over: current) { continue }
            best[stored.key] = stored
        }
        return best.values.sorted(by: isOrderedBefore) + withProblems.sorted(by: isOrderedBefore)
    }

    /// When a save was interrupted (or an old version wrote elsewhere) one key can have two
    /// items: the newest wins, then the one in the group's own collection.
    private static func isPreferred(_ candidate: StoredItem, over current: StoredItem) -> Bool {
        let (a, b) = (candidate.modified ?? 0, current.modified ?? 0)
        if a != b { return a > b }
        return candidate.location.isGroupCollection && !current.location.isGroupCollection
    }

    private static func isOrderedBefore(_ a: StoredItem, _ b: StoredItem) -> Bool {
        (a.key.account, a.key.issuer, a.key.clientID, a.key.kind, a.label)
            < (b.key.account, b.key.issuer, b.key.clientID, b.key.kind, b.label)
    }

    private static func storedItem(_ item: FoundItem, query: ItemQuery, collections: [FoundCollection]) -> StoredItem {
        let collection = collections.first { $0.path == item.collectionPath }
        let collectionLabel = collection?.label ?? ""
        let location = StorageLocation.collection(
            label: collectionLabel, objectPath: item.collectionPath,
            isGroupCollection: collectionLabel == query.group.name, isLocked: item.isLocked || collection?.isLocked == true)
        var key: ItemKey
        var problem: ItemProblem?
        if item.isLocked {
            // A locked item's attributes may be hidden; the search matched the query's.
            var attributes = item.attributes
            for (name, value) in ItemSchema.attributes(for: query) where attributes[name] == nil { attributes[name] = value }
            key = ItemSchema.key(from: attributes, group: query.group, secret: nil).0
        } else {
            (key, problem) = ItemSchema.key(from: item.attributes, group: query.group, secret: item.secret)
        }
        key.group = query.group
        return StoredItem(
            key: key, label: item.label, secret: problem == nil ? item.secret : nil, location: location,
            created: item.created == 0 ? nil : item.created, modified: item.modified == 0 ? nil : item.modified,
            problem: problem)
    }

    static func label(of collectionPath: String, in collections: [FoundCollection]) -> String {
        guard let label = collections.first(where: { $0.path == collectionPath })?.label, !label.isEmpty else {
            return collectionPath
        }
        return label
    }

    /// Unlocks the collections at `paths` through the provider's prompt, or says why not.
    static func unlock(
        _ paths: [String], _ collections: [FoundCollection], _ options: LibSecretOptions, _ thread: LibSecretThread
    ) throws(SecretStoreError) {
        var unique: [String] = []
        for path in paths where !unique.contains(path) { unique.append(path) }
        guard let first = unique.first else { return }
        let name = label(of: first, in: collections)
        guard options.allowsPrompts else { throw .locked(collection: name) }
        let unlocked: Int
        do {
            unlocked = try thread.session.unlock(unique, options, thread)
        } catch {
            // A prompt nobody answered within the bound is a dismissed prompt to the user.
            if case .timedOut(let operation, _) = error, operation.hasPrefix("unlock") {
                throw .unlockDismissed(collection: name)
            }
            throw error
        }
        if unlocked == 0 { throw .unlockDismissed(collection: name) }
    }

    /// Asks the provider to create `group`'s collection (its new-keyring dialog) unless this
    /// store asked before. Nil when it asked before or the creation failed (the reason is
    /// kept in `creation`); a missing bus or provider is an error.
    private static func delete(
        _ attributes: [(String, String)], _ options: LibSecretOptions, _ thread: LibSecretThread
    ) throws(SecretStoreError) -> Int {
        let session = thread.session
        let (found, collections) = try session.search(
            attributes, loadSecrets: false, options, thread)
        guard !found.isEmpty else { return 0 }
        let locked = found.filter { $0.isLocked }
        if !locked.isEmpty { try unlock(locked.map(\.collectionPath), collections, options, thread) }
        do {
            try session.delete(found.map(\.path), options, thread)
        } catch .locked {
            throw .locked(collection: label(of: found[0].collectionPath, in: collections))
        }
        return found.count
    }

    private static func status(
        for group: SecretGroup, failedCreation: String?, _ options: LibSecretOptions, _ thread: LibSecretThread
    ) throws(SecretStoreError) -> StorageStatus {
        let session = thread.session
        let (found, _) = try session.search(
            ItemSchema.attributes(for: ItemQuery(group: group)), loadSecrets: false, options,
            thread)
        // Every collection, not only those holding the group's items: a group that has its own
        // collection but no item yet (a first sign-in) must not be asked to create another.
        let collections = try session.collections(options, thread)
        let provider = session.providerName(options, thread)
        if let own = collections.filter({ $0.label == group.name }).min(by: { $0.path < $1.path }) {
            return StorageStatus(
                location: .collection(label: own.label, objectPath: own.path, isGroupCollection: true, isLocked: own.isLocked),
                groupCollectionExists: true, provider: provider, itemCount: found.count)
        }
        let defaultPath = try session.defaultCollectionPath(options, thread)
        let fallback = collections.first { $0.path == defaultPath }
        return StorageStatus(
            location: .collection(
                label: fallback?.label ?? "", objectPath: fallback?.path ?? "/", isGroupCollection: false,
                isLocked: fallback?.isLocked ?? false,
                fallbackReason: failedCreation ?? (fallback == nil ? "the provider has no default collection either" : nil)),
            groupCollectionExists: false, provider: provider, itemCount: found.count)
    }
}
