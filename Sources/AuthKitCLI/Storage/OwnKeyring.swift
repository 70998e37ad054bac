import AuthKit
import SecretStore

/// `login --own-keyring`: the one moment a keyring of the group's own is asked for. The
/// desktop's new-keyring dialog comes only here, said beforehand on standard error; a
/// dismissal keeps the sign-in in the login keyring, says so, and is not asked again.
enum OwnKeyring {
    /// Readies the store before the sign-in starts: creates the group's keyring when `asked`
    /// and it does not exist (the session's store allows it only then), unlocks a locked one.
    static func prepare(_ shared: SharedSession, asked: Bool) async throws(AuthKitError) {
        if asked, shared.store is SecretServiceStore {
            let status: StorageStatus
            do { status = try await shared.store.storageStatus(for: shared.group) } catch { throw .storage(error) }
            if !status.groupCollectionExists {
                Terminal.printError(
                    "Your desktop asks for a password for a new keyring ‘\(shared.group.name)’ that will hold this group's sign-in "
                        + "(it stays locked in each new session until you unlock it).")
            }
        }
        let prepared = try await shared.checkStore()
        if asked, case .collection(let label, _, false, _, let reason?) = prepared.location {
            Terminal.printError(
                "authkit: warning: the keyring ‘\(shared.group.name)’ was not created (\(reason)); the sign-in goes to "
                    + "the keyring ‘\(label)’ instead, and only another `login --own-keyring` asks again")
        }
    }
}
