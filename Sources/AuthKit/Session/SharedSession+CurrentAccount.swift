import SecretStore

extension SharedSession {
    /// The kind of the store item that marks a group's current account: no secret, only its
    /// key (the account's own issuer, client and name), so every tool of the group sees it.
    static let currentAccountKind = ItemKind.currentAccount.stored

    /// The account chosen with ``useAccount(_:)`` when it is still signed in, else nil.
    public func currentAccount() async -> String? {
        guard let accounts = try? await records().map(\.item.key.account) else { return nil }
        return await currentAccount(among: accounts)
    }

    func currentAccount(among accounts: [String]) async -> String? {
        guard let marks = try? await store.items(matching: ItemQuery(group: group, kind: Self.currentAccountKind), loadSecrets: false)
        else {
            return nil
        }
        return marks.map(\.key.account).first { mark in accounts.contains(mark) }
    }

    /// Makes `account` the group's current account — the one every tool of the group uses when
    /// none is named (``validAccessToken(account:minimumLifetime:scopes:resources:replacing:)``), unless
    /// `AUTHKIT_ACCOUNT` names another. nil clears the choice (the most recent sign-in again).
    public func useAccount(_ account: String?) async throws(AuthKitError) {
        let entries = try await records()
        var chosen: StoredItem?
        if let account {
            guard let entry = entries.first(where: { Self.matches($0.item.key, account: account) }) else {
                throw .notSignedIn(group: group.name, account: account)
            }
            chosen = entry.item
        }
        let held = try await acquireLock()
        defer { held.release() }
        do throws(SecretStoreError) {
            for mark in try await store.items(matching: ItemQuery(group: group, kind: Self.currentAccountKind), loadSecrets: false) {
                _ = try await store.delete(mark.key)
            }
            if let chosen {
                let key = ItemKey(
                    group: group, issuer: chosen.key.issuer, clientID: chosen.key.clientID, account: chosen.key.account,
                    kind: Self.currentAccountKind)
                _ = try await store.save(Array("current".utf8), for: key, label: "authkit current account (\(chosen.key.account))")
            }
        } catch {
            throw .storage(error)
        }
        await agent?.forget(group: group.name)
    }
}
