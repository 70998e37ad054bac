import ArgumentParser
import AuthKit
import SecretStore

#if canImport(Glibc)
import Glibc
#endif

/// `authkit unlock`: opens the encrypted-file store's identity with its passphrase and keeps it
/// in the kernel user keyring until reboot (or `--for`), so that `token`, `exec`, the plug-ins
/// and the agent read the store without asking anyone.
struct UnlockCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unlock",
        abstract: "Unlock the encrypted token store (--storage encrypted-file) until reboot or for a while.",
        discussion: """
            Asks for the store's passphrase on the terminal (without echo), or reads one line from \
            the descriptor --passphrase-fd names, opens the identity in identity.age and keeps it in \
            the kernel user keyring: until reboot, or for --for (8h, 30m, 2d). Every command and the \
            agent then read the store; none of them ever asks for the passphrase. `authkit lock` \
            forgets it at once.

            --change-passphrase seals the identity with a new passphrase (asked twice; with \
            --passphrase-fd the old and the new one on two lines); the token files stay as they are.

            Exit status: 0 when unlocked (or changed), 9 for a wrong passphrase (nothing is changed), \
            3 when the store has no identity yet or cannot be read.
            """
    )

    @Option(name: .customLong("passphrase-fd"), help: ArgumentHelp("Read the passphrase from this file descriptor.", valueName: "N"))
    var passphraseFD: Int32?

    @Option(
        name: .customLong("for"),
        help: ArgumentHelp("Stay unlocked this long (e.g. 8h, 30m, 2d; default: until reboot).", valueName: "time"))
    var lifetime: String?

    @Flag(name: .customLong("change-passphrase"), help: "Seal the identity with a new passphrase instead.")
    var changePassphrase = false

    func validate() throws {
        if let lifetime, Self.seconds(lifetime) == nil {
            throw ValidationError("--for: use a number with s, m, h or d (e.g. 8h), at most 365d")
        }
        if let passphraseFD, passphraseFD < 0 { throw ValidationError("--passphrase-fd: a descriptor is 0 or more") }
        if changePassphrase, lifetime != nil { throw ValidationError("--for does not go with --change-passphrase") }
    }

    /// `8h`, `30m`, `2d`, `90s` or plain seconds, in seconds.
    static func seconds(_ text: String) -> Int? {
        let units: [Character: Int] = ["s": 1, "m": 60, "h": 3600, "d": 86_400]
        var digits = Substring(text)
        var unit = 1
        if let last = text.last, let value = units[last] {
            unit = value
            digits = digits.dropLast()
        }
        guard !digits.isEmpty, digits.allSatisfy(\.isASCII), let number = Int(digits), number > 0, number <= 365 * 86_400 / unit
        else { return nil }
        return number * unit
    }

    func run() async throws {
        let store = EncryptedFileStore()
        let reader = PassphraseReader(fd: passphraseFD)
        do {
            guard try store.lockState() != .notSetUp else { throw SecretStoreError.encryptedStoreNotSetUp(directory: store.directory) }
            if changePassphrase {
                let old = try await reader.read(prompt: "Current passphrase of \(store.identityPath): ")
                let new = try await reader.readNew()
                try await Self.onOwnThread { () throws(SecretStoreError) in try store.changePassphrase(old: old, new: new) }
                Terminal.printOut("The identity \(store.identityPath) is sealed with the new passphrase; the token files are unchanged.")
                Terminal.printOut("Keep a backup of the new identity.age: the old copy opens only with the old passphrase.")
                return
            }
            let passphrase = try await reader.read(prompt: "Passphrase of \(store.identityPath): ")
            let until = lifetime.flatMap(Self.seconds).map { Int(time(nil)) + $0 }
            try await Self.onOwnThread { () throws(SecretStoreError) in try store.unlock(passphrase: passphrase, until: until) }
            Terminal.printOut("Unlocked \(store.directory) \(Self.describe(until: until)).")
            if let agent = await StatusCommand.agentLine() {
                Terminal.printOut("The agent reads it from the keyring too:\n\(agent)")
            }
        } catch let error as SecretStoreError {
            Terminal.printError(Voice.error(error.summary, hint: error.hint))
            if case .wrongPassphrase = error { throw ExitStatus.wrongPassphrase }
            throw ExitStatus.storageUnavailable
        } catch let error as PassphraseReader.Failure {
            Terminal.printError(Voice.error(error.description, hint: nil))
            throw ExitStatus.usage
        }
    }

    /// "until reboot", or "until 2026-11-26 14:05 (in 8h)".
    static func describe(until: Int?) -> String {
        guard let until else { return "until reboot (or `authkit lock`)" }
        var moment = tm()
        var seconds = time_t(until)
        var text = [CChar](repeating: 0, count: 32)
        let length = localtime_r(&seconds, &moment) == nil ? 0 : strftime(&text, text.count, "%Y-%m-%d %H:%M", &moment)
        let date = String(decoding: text.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return "until \(date) (or reboot, or `authkit lock`)"
    }

    /// scrypt takes about half a second: never on the cooperative pool.
    static func onOwnThread(_ work: @escaping @Sendable () throws(SecretStoreError) -> Void) async throws(SecretStoreError) {
        let result = await OwnThread.run { () -> Result<Void, SecretStoreError> in
            do throws(SecretStoreError) {
                try work()
                return .success(())
            } catch {
                return .failure(error)
            }
        }
        try result.get()
    }
}
