import SecretStore

/// Which store holds a group's sign-in when it is not the Secret Service: written when a
/// sign-in is saved elsewhere (`authkit login --storage kernel-keyring`), read by every later
/// command and by ``SharedSession/init(group:store:transport:environment:lockTimeout:logger:clock:)``
/// when nothing names a store, so the sign-in is found where it was stored without the flag.
///
/// One line per group, `<group> <store>`, in `$XDG_STATE_HOME/authkit/storage` (else
/// `~/.local/state/authkit/storage`): a ``GroupStateFile``, trusted only as that is. A flag,
/// `AUTHKIT_STORAGE` or a `storage` key in the configuration always wins over it. Signing out
/// the last account of the group removes its line.
enum StorageRecord {
    typealias Failure = GroupStateFile.Failure

    /// The recorded store of `group`, or nil (none recorded, or the file cannot be trusted).
    static func choice(for group: String, environment: [String: String]) -> StorageChoice? {
        entries(path(environment: environment))[group]
    }

    /// Records `choice` for `group` (the Secret Service, the default, removes the line).
    /// Failing to record is not failing the sign-in: the caller logs it.
    static func record(_ choice: StorageChoice, for group: String, environment: [String: String]) throws(Failure) {
        try GroupStateFile.update(path(environment: environment), group: group) { _ in
            choice == .secretService ? nil : choice.rawValue
        }
    }

    /// What a sign-in says when its record could not be written: a tool naming only the group
    /// would look in the Secret Service.
    static func warning(_ failure: Failure, choice: StorageChoice) -> String {
        "could not note where this sign-in is kept (\(failure.path): \(failure.reason)), so a tool that names only the group "
            + "may look for it elsewhere; name the store with --storage \(choice.rawValue) or AUTHKIT_STORAGE=\(choice.rawValue)"
    }

    /// Removes `group`'s line when it names `choice` (its last sign-in there is gone).
    static func forget(_ group: String, storedIn choice: StorageChoice, environment: [String: String]) throws(Failure) {
        try GroupStateFile.update(path(environment: environment), group: group) { current in
            current == choice.rawValue ? nil : current
        }
    }

    static func path(environment: [String: String]) -> String {
        GroupStateFile.path("storage", environment: environment)
    }

    /// The file's lines naming a store (see ``GroupStateFile/lines(_:)``); others are skipped.
    static func entries(_ path: String) -> [String: StorageChoice] {
        GroupStateFile.lines(path).compactMapValues(StorageChoice.init(rawValue:))
    }
}
