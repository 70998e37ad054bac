import AuthKitCore
import SecretStore
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Where tokens are kept: one of the kinds of store in `StoreKinds.all`, by its name
/// (`secret-service`, `kernel-keyring`, `plain-file` …).
public struct StorageChoice: RawRepresentable, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// The store's name (`StoreKind.name`).
    public let rawValue: String
    /// The kind named, kept with the name: a choice never stands for another store.
    private let choice: any StoreKind.Type

    /// The choice of the store named `rawValue`, or nil when no store has that name.
    public init?(rawValue: String) {
        guard let kind = StoreKinds.named(rawValue) else { return nil }
        self.rawValue = rawValue
        choice = kind
    }

    /// The choice of `kind`.
    public init(_ kind: any StoreKind.Type) {
        rawValue = kind.name
        choice = kind
    }

    /// Two choices are the same when they name the same store.
    public static func == (lhs: StorageChoice, rhs: StorageChoice) -> Bool { lhs.rawValue == rhs.rawValue }
    /// Hashes the store's name.
    public func hash(into hasher: inout Hasher) { hasher.combine(rawValue) }

    /// The choice that names `store`, or nil for a store of a tool's own.
    public init?(store: any SecretStore) {
        guard let kind = StoreKinds.of(store) else { return nil }
        self.init(kind)
    }

    /// Every store, in the order of `StoreKinds.all`.
    public static var allCases: [StorageChoice] { StoreKinds.all.map(StorageChoice.init) }

    /// The store's description (`StoreKind`), as it was when the choice was made.
    public var kind: any StoreKind.Type { choice }

    /// A store of this kind (see `StoreKind.make`); by default one that causes no dialog.
    public func makeStore(_ context: StoreContext = .background) -> any SecretStore {
        kind.make(context)
    }

    public var description: String { rawValue }

    /// The freedesktop Secret Service (gnome-keyring, KeePassXC, KWallet …): the default.
    public static let secretService = StorageChoice(SecretServiceStore.self)
    /// The kernel's per-user persistent keyring: memory only, shared by the user's sessions
    /// (SSH, cron, CI) where no Secret Service runs.
    public static let kernelKeyring = StorageChoice(KernelKeyringStore.self)
    /// An unencrypted file under `$XDG_STATE_HOME/authkit/`. Only when chosen explicitly.
    public static let plainFile = StorageChoice(PlainFileStore.self)

    /// Every store's name, in the order of `StoreKinds.all`, as a sentence says them:
    /// `secret-service, kernel-keyring or plain-file`.
    public static var names: String {
        let all = allCases.map(\.rawValue)
        guard all.count > 1, let last = all.last else { return all.joined() }
        return all.dropLast().joined(separator: ", ") + " or " + last
    }

    /// `--storage`'s help: every store with its summary, from the one list.
    public static var helpList: String {
        allCases.map { "\($0.rawValue) (\($0.kind.summary))" }.joined(separator: ", ")
    }
}

/// A resolved profile: everything a sign-in needs, each value from the strongest source
/// (flag, then environment, then the profile in the configuration file, then a built-in
/// profile, then authkit's default).
public struct Profile: Sendable, Equatable {
    /// The profile's name (`[profile NAME]` or a built-in one), if one was chosen.
    public var name: String?
    /// The issuer identifier; may be a `{tenantid}` template (see ``tenant``).
    public var issuer: String?
    /// For a template issuer: which tenant's discovery document to read (`common`,
    /// `organizations`, `consumers` or a tenant id). Default `common`.
    public var tenant: String?
    /// The OAuth client id registered with the provider.
    public var clientID: String?
    /// A confidential client's secret, from `AUTHKIT_CLIENT_SECRET` or the config file (never a flag).
    public var clientSecret: ClientSecret?
    /// Always contains `openid`.
    public var scopes: [String]
    /// The group whose shared sign-in this profile uses (reverse-DNS style).
    public var group: String
    /// The path of the loopback redirect URI (default `/`).
    public var redirectPath: String
    /// The host written into the loopback redirect URI (`127.0.0.1` or `localhost`).
    public var redirectHost: LoopbackRedirectReceiver.RedirectHost
    /// The loopback redirect's port; nil (the default) for any free one, which RFC 8252 §7.3
    /// asks providers to accept. For a provider that matches the port too.
    public var redirectPort: Int? = nil
    /// Whether the sign-in binds its tokens to a key (DPoP, RFC 9449); `auto` by default.
    public var dpop: DPoPMode = .auto
    /// The APIs later tokens may be narrowed to, named at sign-in (RFC 8707 §2.1; some
    /// providers refuse a narrower token for a resource the sign-in did not name).
    public var resources: [String] = []
    /// Microsoft Graph base URL including the version, e.g. `https://graph.microsoft.com/v1.0`.
    public var graphBaseURL: String?
    /// Where the tokens are kept.
    public var storage: StorageChoice
    /// `login_hint` for the provider's sign-in page (pre-fills the account).
    public var loginHint: String?
    /// `prompt` for the authorization request (`login`, `consent`, `select_account` …).
    public var prompt: String?
    /// Entra's `domain_hint` for the authorization request.
    public var domainHint: String?
    /// Which source set each value ("--issuer", "AUTHKIT_GROUP", "config:12", "built-in microsoft").
    public var sources: [String: String]

    /// The group used when nothing names one: `authkit`.
    public static let defaultGroup = GroupName.defaultGroup
    /// The scopes asked for when nothing names any: `openid profile offline_access`.
    public static let defaultScopes = ["openid", "profile", "offline_access"]

    /// The profiles authkit knows without a configuration file.
    public static let builtIn: [String: [String: String]] = BuiltInProfiles.all
}
