import ArgumentParser
import SecretStore

/// `authkit lock`: forgets the encrypted store's unlocked identity; the files stay.
struct LockCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lock",
        abstract: "Lock the encrypted token store again (forget its unlocked identity).",
        discussion: """
            Removes the identity `authkit unlock` kept in the kernel user keyring. The token files \
            stay; saving (a sign-in, a refresh) still works, reading answers "locked" until the \
            next `authkit unlock`. An identity a service was handed ($CREDENTIALS_DIRECTORY, \
            AUTHKIT_IDENTITY_FILE) is not affected.
            """
    )

    func run() async throws {
        let store = EncryptedFileStore()
        do {
            let wasUnlocked = try store.lock()
            Terminal.printOut(wasUnlocked ? "Locked \(store.directory)." : "\(store.directory) was not unlocked.")
        } catch {
            Terminal.printError(Voice.error(error.summary, hint: error.hint))
            throw ExitStatus.storageUnavailable
        }
    }
}
