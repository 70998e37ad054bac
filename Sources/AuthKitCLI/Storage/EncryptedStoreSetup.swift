import ArgumentParser
import AuthKit
import SecretStore

/// The first use of the encrypted-file store (`login --storage encrypted-file`): a new identity,
/// sealed with a passphrase asked twice (or read from `--passphrase-fd`), unlocked until reboot,
/// and the words that say where everything is and what to back up.
enum EncryptedStoreSetup {
    /// How the store is unlocked here, for `status`: "unlocked until reboot (kernel user
    /// keyring)", "unlocked with the identity FILE", "locked (`authkit unlock`)"; nil when
    /// `profile` uses another store.
    static func stateLine(_ profile: Profile) -> String? {
        guard profile.storage == StorageChoice(EncryptedFileStore.self) else { return nil }
        switch try? EncryptedFileStore().lockState() {
        case .unlocked(.keyring(let until))?:
            return "unlocked \(UnlockCommand.describe(until: until)), kernel user keyring"
        case .unlocked(.file(let path))?: return "unlocked with the identity \(path)"
        case .locked?: return "locked (`authkit unlock`)"
        case .notSetUp?: return "not set up (`authkit login --storage encrypted-file`)"
        case nil: return nil
        }
    }

    /// Whether `profile` uses the encrypted store and it has no identity yet.
    static func needsSetUp(_ profile: Profile) -> Bool {
        profile.storage == StorageChoice(EncryptedFileStore.self) && (try? EncryptedFileStore().lockState()) == .notSetUp
    }

    /// Creates the store's identity when `profile` uses the store and it has none yet; else
    /// does nothing (a locked store takes a sign-in: saving needs only the recipient).
    static func prepare(_ profile: Profile, passphraseFD: Int32?) async throws {
        guard profile.storage == StorageChoice(EncryptedFileStore.self) else { return }
        let store = EncryptedFileStore()
        do {
            guard try store.lockState() == .notSetUp else { return }
            Terminal.printError("The encrypted token store \(store.directory) is new: choose a passphrase for it.")
            let passphrase = try await PassphraseReader(fd: passphraseFD).readNew()
            try await UnlockCommand.onOwnThread { () throws(SecretStoreError) in
                _ = try store.createIdentity(passphrase: passphrase)
            }
            let recipient = (try? store.recipientText()) ?? "?"
            Terminal.printError(
                """
                Created the encrypted token store (age files) in \(store.directory):
                  identity:   \(store.identityPath) (sealed with your passphrase)
                  recipient:  \(recipient)
                  tokens:     \(store.directory)/tokens/\(profile.group)/
                It is unlocked until reboot; after a reboot run `authkit unlock`.
                Back up identity.age and remember the passphrase: without both the tokens cannot be
                read, and signing in again is the only way back. `age -d identity.age` opens it.
                """)
        } catch let error as SecretStoreError {
            Terminal.printError(Voice.error(error.summary, hint: error.hint))
            throw ExitStatus.storageUnavailable
        } catch let error as PassphraseReader.Failure {
            Terminal.printError(Voice.error(error.description, hint: nil))
            throw ExitStatus.usage
        }
    }
}
