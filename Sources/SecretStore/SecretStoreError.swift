/// Why a store operation failed, with what the user can do about it.
///
/// No case ever carries a secret: messages hold group names, labels, paths, attribute names
/// and the provider's own error text, which never includes secret values.
public enum SecretStoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The group name is not acceptable.
    case invalidGroup(String, reason: String)
    /// A key field cannot be stored as an attribute.
    case invalidKey(field: String, reason: String)
    /// The secret cannot be stored (it must be UTF-8 text, like the JSON records authkit writes).
    case invalidSecret(reason: String)
    /// There is no D-Bus session bus to reach the Secret Service over (typical over SSH).
    case noSessionBus(detail: String)
    /// A session bus exists but nothing provides `org.freedesktop.secrets` and it could not be started.
    case noSecretService(detail: String)
    /// The collection holding the item (or the one it would be written to) is locked.
    case locked(collection: String)
    /// Unlocking was asked for, and the prompt was dismissed or could not be shown.
    case unlockDismissed(collection: String)
    /// The provider did not answer within the bound.
    case timedOut(operation: String, seconds: Double)
    /// The provider answered with an error.
    case providerFailure(operation: String, message: String)
    /// A stored item of ours cannot be used; it was left in place.
    case corruptItem(String, reason: String)
    /// The plain-file store's directory or file has permissions that let others read it.
    case plainFilePermissions(path: String, mode: UInt32, expected: UInt32)
    /// The plain-file store's directory or file belongs to another user.
    case plainFileOwner(path: String, owner: UInt32)
    /// Reading or writing the plain-file store failed.
    case plainFileIO(path: String, operation: String, errno: Int32)
    /// The plain file cannot be parsed; it was left in place and is not overwritten.
    case plainFileCorrupt(path: String, reason: String)
    /// The kernel keyring cannot be used here (keyctl blocked by seccomp, no key support).
    case kernelKeyringUnavailable(detail: String)
    /// The kernel refused a record over the user's key quota; the previous record was kept.
    case kernelKeyringQuota(detail: String)
    /// A kernel keyring operation failed (the kernel's reason in `message`).
    case kernelKeyringFailure(operation: String, message: String)
    /// The encrypted-file store holds files but its identity is not unlocked here: an answer,
    /// never a prompt (`authkit unlock` unlocks it).
    case encryptedStoreLocked(directory: String)
    /// The encrypted-file store has no identity yet (`authkit login --storage encrypted-file`
    /// creates one).
    case encryptedStoreNotSetUp(directory: String)
    /// The passphrase does not open the store's identity file; nothing was changed.
    case wrongPassphrase(path: String)
    /// The store's identity (its sealed file, its recipient, or one a service was given)
    /// cannot be used.
    case encryptedStoreIdentity(path: String, reason: String)
    /// A store from outside authkit's sources failed, in its own words: adding a store adds no
    /// case here.
    case store(StoreFailure)

    /// The whole message: ``summary`` and, when there is one, ``hint``, with library detail
    /// (GLib's text) in full.
    /// True when the store cannot be reached here at all (no session bus, no Secret Service,
    /// no kernel keyring) — as in a sandbox or on a remote host that only has a forwarded agent
    /// socket — rather than reached and refusing.
    public var meansNoStoreHere: Bool {
        switch self {
        case .noSessionBus, .noSecretService, .kernelKeyringUnavailable: return true
        default: return false
        }
    }

    public var description: String {
        let text = parts(detail: { $0 })
        return text.hint.map { "\(text.summary); \($0)" } ?? text.summary
    }

    /// What went wrong, in one clause starting in lower case; long library text (GLib's
    /// messages) shortened to its first line and 100 characters. The full text is in
    /// ``description``.
    public var summary: String { parts(detail: Self.shortened).summary }

    /// What the user can do about it, if anything, in one clause.
    public var hint: String? { parts(detail: Self.shortened).hint }

    private func parts(detail shorten: (String) -> String) -> (summary: String, hint: String?) {
        switch self {
        case .invalidGroup(let name, let reason):
            return ("‘\(name)’ is not a valid group name: \(reason)", "use a reverse-DNS name such as com.example.shared")
        case .invalidKey(let field, let reason):
            return ("the \(field) of the item cannot be stored: \(reason)", nil)
        case .invalidSecret(let reason):
            return ("the secret cannot be stored: \(reason)", nil)
        case .noSessionBus(let detail):
            return (
                "no D-Bus session bus, so the Secret Service cannot be reached (\(shorten(detail)))",
                "on a server, over SSH or in CI use --storage encrypted-file (a passphrase-sealed file that survives a reboot; "
                    + "`authkit unlock` once per boot) or --storage kernel-keyring (memory only, gone at reboot); on a desktop "
                    + "start a bus with `dbus-run-session -- bash` and unlock a keyring in it with "
                    + "`gnome-keyring-daemon --unlock --components=secrets`; --insecure-storage keeps the tokens unencrypted in a file"
            )
        case .noSecretService(let detail):
            return (
                "no Secret Service on the session bus: nothing provides org.freedesktop.secrets (\(shorten(detail)))",
                "install and start one (gnome-keyring, KeePassXC with Secret Service integration, or KDE's ksecretd), "
                    + "or use --storage encrypted-file (a passphrase-sealed file) or --storage kernel-keyring (memory only); "
                    + "--insecure-storage keeps the tokens unencrypted in a file"
            )
        case .locked(let collection):
            let name = collection.isEmpty ? "holding the item" : "‘\(collection)’"
            return (
                "the keyring collection \(name) is locked",
                "run `authkit status` at your desktop and answer the keyring's unlock dialog (a refresh, a plug-in or the agent "
                    + "never shows one), or unlock it in Seahorse (Passwords and Keys); then try again"
                    + Self.loginKeyringHint(collection)
            )
        case .unlockDismissed(let collection):
            return (
                "the keyring collection ‘\(collection)’ is locked and the unlock prompt was dismissed or could not be shown (no display?)",
                "run the command again at your desktop and answer the dialog, or unlock it in Seahorse (Passwords and Keys)"
                    + Self.loginKeyringHint(collection)
            )
        case .timedOut(let operation, let seconds):
            return (
                "the Secret Service did not answer within \(Self.format(seconds)) s while trying to \(operation)",
                "its provider may be waiting on a dialog of its own or be hung: answer or close its open dialogs (KeePassXC), "
                    + "or restart it (gnome-keyring: `gnome-keyring-daemon --replace`), and try again"
            )
        case .providerFailure(let operation, let message):
            return ("the Secret Service failed to \(operation): \(shorten(message))", nil)
        case .corruptItem(let label, let reason):
            return (
                "the stored item ‘\(label)’ cannot be used: \(reason); it was left in place",
                "remove it with `authkit logout` (or Seahorse) and sign in again"
            )
        case .plainFilePermissions(let path, let mode, let expected):
            return (
                "\(path) has mode \(Self.octal(mode)), which lets other users in; authkit needs \(Self.octal(expected))",
                "run `chmod \(Self.octal(expected)) \(path)` if you trust its contents, or remove it"
            )
        case .plainFileOwner(let path, let owner):
            return ("\(path) belongs to user id \(owner), not to you; authkit will not use it", "remove it or fix its owner")
        case .plainFileIO(let path, let operation, let errno):
            return ("could not \(operation) \(path): \(Self.errnoText(errno))", nil)
        case .kernelKeyringUnavailable(let detail):
            return (
                "the kernel keyring cannot be used here: \(detail)",
                "use --storage secret-service on a desktop, or, knowing the tokens are then kept unencrypted, --storage plain-file"
            )
        case .kernelKeyringQuota(let detail):
            return (
                "the kernel keyring is full: \(detail)",
                "remove sign-ins you no longer use (`authkit logout --all --group NAME`, `keyctl show @u`), "
                    + "or have root raise kernel.keys.maxkeys and kernel.keys.maxbytes with sysctl"
            )
        case .kernelKeyringFailure(let operation, let message):
            return ("the kernel keyring failed to \(operation): \(message)", nil)
        case .encryptedStoreLocked(let directory):
            return ("the encrypted token store \(directory) is locked", "run `authkit unlock`")
        case .encryptedStoreNotSetUp(let directory):
            return (
                "the encrypted token store \(directory) has no identity yet",
                "run `authkit login --storage encrypted-file`, which creates one protected by a passphrase"
            )
        case .wrongPassphrase(let path):
            return (
                "the passphrase does not open \(path); nothing was changed",
                "try again; a forgotten passphrase cannot be recovered: remove the store's folder (`rm -r "
                    + "\(Self.folder(of: path))`) and sign in again (README, Troubleshooting)"
            )
        case .encryptedStoreIdentity(let path, let reason):
            return ("the identity \(path) cannot be used: \(reason)", nil)
        case .store(let failure):
            return (failure.summary, failure.hint)
        case .plainFileCorrupt(let path, let reason):
            return (
                "the plain token file \(path) cannot be read (\(reason)); it was left as it is and will not be overwritten",
                "move it away or delete it, then sign in again"
            )
        }
    }

    /// GLib's text cut to what a person reads at a glance: the D-Bus error name prefix
    /// (`GDBus.Error:org.freedesktop…: `) dropped, the first line, at most 100 characters.
    static func shortened(_ text: String) -> String {
        var rest = Substring(text)
        if rest.hasPrefix("GDBus.Error:"), let colon = rest.dropFirst("GDBus.Error:".count).firstIndex(of: ":") {
            rest = rest[rest.index(after: colon)...].drop { $0 == " " }
        }
        if let newline = rest.firstIndex(where: { $0 == "\n" || $0 == "\r" }) { rest = rest[..<newline] }
        return rest.count > 100 ? String(rest.prefix(99)) + "…" : String(rest)
    }

    private static func octal(_ mode: UInt32) -> String {
        let digits = String(mode & 0o7777, radix: 8)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }

    /// The login keyring, in a session without a desktop, unlocks from a terminal; no other
    /// keyring does (gnome-keyring-daemon's --unlock names only the login keyring).
    static func loginKeyringHint(_ collection: String) -> String {
        collection.lowercased() == "login"
            ? "; without a desktop, `gnome-keyring-daemon --unlock --replace` unlocks the login keyring from a terminal" : ""
    }

    private static func format(_ seconds: Double) -> String {
        seconds == seconds.rounded() ? String(Int(seconds)) : String(seconds)
    }

    private static func errnoText(_ code: Int32) -> String {
        switch code {
        case 1: return "operation not permitted (EPERM)"
        case 2: return "no such file or directory (ENOENT)"
        case 13: return "permission denied (EACCES)"
        case 17: return "it already exists (EEXIST)"
        case 20: return "a path component is not a directory (ENOTDIR)"
        case 21: return "it is a directory (EISDIR)"
        case 28: return "no space left on device (ENOSPC)"
        case 30: return "read-only file system (EROFS)"
        case 40: return "too many symbolic links (ELOOP)"
        case 122: return "disk quota exceeded (EDQUOT)"
        default: return "error \(code)"
        }
    }
}

/// What a store from outside authkit's sources says went wrong (``SecretStoreError/store(_:)``).
public struct StoreFailure: Error, Sendable, Equatable {
    /// The store's name (``StoreKind/name``).
    public var store: String
    /// What went wrong, in one clause starting in lower case; never a secret.
    public var summary: String
    /// What the user can do about it, if anything.
    public var hint: String?

    /// A failure of the store named `store`.
    public init(store: String, summary: String, hint: String? = nil) {
        self.store = store
        self.summary = summary
        self.hint = hint
    }
}

extension SecretStoreError {
    /// The folder of a file's path (the encrypted store's, for its identity).
    static func folder(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return path }
        return String(path[..<slash])
    }
}
