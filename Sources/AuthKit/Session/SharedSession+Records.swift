import SecretStore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The sign-in's records in the store: reading, choosing, writing, and the group's lock.
extension SharedSession {

    /// Encodes `record` and stores it under `key` (one item, replaced whole).
    @discardableResult
    func write(_ record: TokenRecord, for key: ItemKey) async throws(AuthKitError) -> StorageLocation {
        let bytes: [UInt8]
        do throws(TokenRecord.RecordError) { bytes = try record.encoded() } catch {
            throw .corruptRecord(account: record.account, reason: error.description)
        }
        let location: StorageLocation
        do {
            location = try await store.save(bytes, for: key, label: key.defaultLabel)
        } catch {
            throw .storage(error)
        }
        // Saved: whatever a failed write left pending for the key is older.
        PendingSave.forget(key)
        logger.debug("stored", metadata: ["generation": "\(record.generation)"])
        return location
    }

    typealias Entry = (item: StoredItem, record: Result<TokenRecord, RecordProblem>)

    /// Why a stored item could not be read as a record.
    struct RecordProblem: Error, CustomStringConvertible {
        var description: String
    }

    func itemKey(for record: TokenRecord) -> ItemKey {
        ItemKey(group: group, issuer: record.issuer, clientID: record.clientID, account: record.account, kind: TokenRecord.kind)
    }

    /// Every token item of the group with its decoded record, most recent first.
    func records() async throws(AuthKitError) -> [Entry] {
        let items: [StoredItem]
        do {
            items = try await store.items(matching: ItemQuery(group: group, kind: TokenRecord.kind), loadSecrets: true)
        } catch {
            throw .storage(error)
        }
        let entries: [Entry] = items.map { item in
            do throws(SecretStoreError) {
                let secret = try item.validatedSecret()
                do throws(TokenRecord.RecordError) {
                    return (item, .success(try TokenRecord.decode(secret)))
                } catch {
                    return (item, .failure(RecordProblem(description: error.description)))
                }
            } catch {
                let reason = item.location.isLocked ? "the collection is locked" : (item.problem?.description ?? error.description)
                return (item, .failure(RecordProblem(description: reason)))
            }
        }
        return entries.sorted { lhs, rhs in
            (try? lhs.record.get().signedInAt) ?? 0 > (try? rhs.record.get().signedInAt) ?? 0
        }
    }

    static func matches(_ key: ItemKey, account: String?) -> Bool {
        guard let account else { return true }
        return key.account == account || key.account.lowercased() == account.lowercased()
    }

    /// The account to use: the named one, else the most recently signed in.
    func select(account: String?) async throws(AuthKitError) -> (StoredItem, TokenRecord) {
        let all = try await records()
        // No account named: AUTHKIT_ACCOUNT (per shell, per directory with direnv), else the
        // group's current account (`authkit account use`), else the most recent sign-in. The
        // current account is looked up only when there is a choice to make.
        var account = account ?? environment["AUTHKIT_ACCOUNT"].flatMap { $0.isEmpty ? nil : $0 }
        if account == nil, Set(all.map(\.item.key.account)).count > 1 {
            account = await currentAccount(among: all.map(\.item.key.account))
        }
        let entries = all.filter { Self.matches($0.item.key, account: account) }
        guard let first = entries.first(where: { (try? $0.record.get()) != nil }) ?? entries.first else {
            throw .notSignedIn(group: group.name, account: account)
        }
        switch first.record {
        case .success(let record): return (first.item, record)
        case .failure(let reason):
            if first.item.location.isLocked {
                throw .storage(.locked(collection: first.item.location.description))
            }
            throw .corruptRecord(account: first.item.key.account, reason: reason.description)
        }
    }

    func readRecord(_ key: ItemKey) async throws(AuthKitError) -> TokenRecord? {
        let item: StoredItem?
        do { item = try await store.item(for: key) } catch { throw .storage(error) }
        guard let item else { return nil }
        do {
            return try TokenRecord.decode(try item.validatedSecret())
        } catch let error as TokenRecord.RecordError {
            throw .corruptRecord(account: key.account, reason: error.description)
        } catch let error as SecretStoreError {
            throw .storage(error)
        } catch {
            throw .corruptRecord(account: key.account, reason: "\(error)")
        }
    }

    /// The group's cross-process lock (see ``RefreshLock``), held by refreshes, sign-in writes
    /// and sign-outs.
    func acquireLock() async throws(AuthKitError) -> RefreshLock.Held {
        let lock: RefreshLock
        do { lock = try RefreshLock(group: group.name, environment: environment) } catch { throw .lock(error) }
        let start = ContinuousClock.now
        let held: RefreshLock.Held
        do { held = try await lock.acquire(timeout: lockTimeout) } catch { throw .lock(error) }
        logger.debug("holding the group's lock", metadata: ["path": "\(lock.path)", "waited": "\(ContinuousClock.now - start)"])
        return held
    }
}
