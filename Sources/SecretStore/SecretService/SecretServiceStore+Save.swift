/// A save on the libsecret thread: the key's item updated in place, or a new one placed.
extension SecretServiceStore {
    /// Updates the key's existing item in place (`Item.SetSecret`: what KeePassXC answers at
    /// once, where a `CreateItem` replacing an item waits for a prompt nobody answers), or creates
    /// one where none is. A write touches the key's own items and, only to place a new item,
    /// the collections' labels — never another item. An existing item moves only into the
    /// group's own collection once there is one.
    static func save(
        _ secret: [UInt8], for key: ItemKey, label: String, _ creation: CollectionCreations?, _ options: LibSecretOptions,
        _ thread: LibSecretThread
    ) throws(SecretStoreError) -> StorageLocation {
        let session = thread.session
        let group = key.group.name
        let (found, holding) = try session.search(
            ItemSchema.attributes(for: ItemQuery(key)), loadSecrets: false, openSession: true, options, thread)
        // Only an item with our attributes, format included, is updated in place (another format's
        // is replaced by a new item). A provider may add its own (KeePassXC: Title, Uuid, Path …).
        let ours = ItemSchema.attributes(for: key)
        let updatable = found.filter { item in
            ours.allSatisfy { item.attributes[$0.0] == $0.1 } || (item.isLocked && item.attributes.isEmpty)
        }
        let inOwn = updatable.filter { item in holding.contains { $0.path == item.collectionPath && $0.label == group } }
        var inPlace = inOwn.first { !$0.isLocked } ?? inOwn.first
        var target: FoundCollection?
        var fallbackReason: String?
        if inPlace == nil {
            // Where a new item goes: the group's own collection (made now when the policy asks
            // for one), else the default collection. Without a collection of the group's own, an
            // existing item stays where it is.
            var collections = try session.collections(options, thread)
            target = collections.filter { $0.label == group }.min { $0.path < $1.path }
            if target == nil, let creation, let created = try createGroupCollection(group, creation, options, thread) {
                collections.append(created)
                target = created
            }
            if target == nil {
                fallbackReason = creation?.failure(of: group)
                inPlace = updatable.first { !$0.isLocked } ?? updatable.first
            }
            if target == nil, inPlace == nil {
                let defaultPath = try session.defaultCollectionPath(options, thread)
                target = collections.first { $0.path == defaultPath }
                guard target != nil else {
                    throw .providerFailure(
                        operation: "choose a collection",
                        message: "the group has no collection of its own and the provider has no default collection"
                            + (fallbackReason.map { " (creating one failed: \($0))" } ?? ""))
                }
            }
        }
        let written: String
        let collection: FoundCollection
        if let item = inPlace {
            collection =
                holding.first { $0.path == item.collectionPath }
                ?? FoundCollection(path: item.collectionPath, label: "", isLocked: item.isLocked)
            if item.isLocked { try unlock([item.collectionPath], holding, options, thread) }
            do {
                try session.setSecret(secret, ofItem: item.path, options, thread)
            } catch .locked {
                throw .locked(collection: Self.label(of: item.collectionPath, in: holding))
            }
            written = item.path
        } else if let target {
            collection = target
            if target.isLocked { try unlock([target.path], [target], options, thread) }
            do {
                written = try session.createItem(
                    inCollection: target.path, attributes: ItemSchema.attributes(for: key), label: label, secret: secret,
                    options, thread)
            } catch .locked {
                throw .locked(collection: target.label)
            }
        } else {
            throw .providerFailure(operation: "choose a collection", message: "none found")
        }
        // One item per key: remove copies elsewhere (another collection, an interrupted save).
        // Best effort: a copy in a locked collection stays, and reads prefer the newest.
        let copies = found.filter { $0.path != written && !$0.isLocked }.map(\.path)
        if !copies.isEmpty { try? session.delete(copies, options, thread) }
        return .collection(
            label: collection.label, objectPath: collection.path, isGroupCollection: collection.label == group, isLocked: false,
            fallbackReason: fallbackReason)
    }
}
