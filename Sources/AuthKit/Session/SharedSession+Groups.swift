import SecretStore

extension SharedSession {
    /// The other groups that hold a sign-in, sorted: those in this session's store, and those
    /// whose sign-in was saved in another store (``defaultStore(group:environment:)``'s record)
    /// — what `authkit status` names when its group is not the one signed in. A store that
    /// cannot be read contributes nothing. Reads no secret.
    public func otherSignedInGroups() async -> [String] {
        var names = Set((try? await store.groups(holding: TokenRecord.kind))?.map(\.name) ?? [])
        let ownChoice = StorageChoice(store: store)
        for (group, choice) in StorageRecord.entries(StorageRecord.path(environment: environment)) where choice != ownChoice {
            guard let other = try? SecretGroup(group),
                let items = try? await choice.makeStore().items(
                    matching: ItemQuery(group: other, kind: TokenRecord.kind), loadSecrets: false),
                items.contains(where: { $0.problem == nil })
            else { continue }
            names.insert(group)
        }
        names.remove(group.name)
        return names.sorted()
    }
}
