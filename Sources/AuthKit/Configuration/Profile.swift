#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Where tokens are kept.
public enum StorageChoice: String, Sendable, Equatable, CaseIterable {
    /// The freedesktop Secret Service (gnome-keyring, KeePassXC, KWallet …): the default.
    case secretService = "secret-service"
    /// The kernel's per-user persistent keyring: memory only, shared by the user's sessions
    /// (SSH, cron, CI) where no Secret Service runs.
    case kernelKeyring = "kernel-keyring"
    /// An unencrypted file under `$XDG_STATE_HOME/authkit/`. Only when chosen explicitly.
    case plainFile = "plain-file"
}

/// A resolved profile: everything a sign-in needs, each value from the strongest source
/// (flag, then environment, then the profile in the configuration file, then a built-in
/// profile, then authkit's default).
public struct Profile: Sendable, Equatable {
    public var name: String?
    /// The issuer identifier; may be a `{tenantid}` template (see ``tenant``).
    public var issuer: String?
    /// For a template issuer: which tenant's discovery document to read (`common`,
    /// `organizations`, `consumers` or a tenant id). Default `common`.
    public var tenant: String?
    public var clientID: String?
    public var clientSecret: ClientSecret?
    /// Always contains `openid`.
    public var scopes: [String]
    public var group: String
    public var redirectPath: String
    public var redirectHost: LoopbackRedirectReceiver.RedirectHost
    /// Microsoft Graph base URL including the version, e.g. `https://graph.microsoft.com/v1.0`.
    public var graphBaseURL: String?
    public var storage: StorageChoice
    public var loginHint: String?
    public var prompt: String?
    public var domainHint: String?
    /// Which source set each value ("--issuer", "AUTHKIT_GROUP", "config:12", "built-in microsoft").
    public var sources: [String: String]

    public static let defaultGroup = "authkit"
    public static let defaultScopes = ["openid", "profile", "offline_access"]

    /// The profiles authkit knows without a configuration file.
    public static let builtIn: [String: [String: String]] = [
        "microsoft": [
            "issuer": "https://login.microsoftonline.com/{tenantid}/v2.0",
            "tenant": "common",
            "scopes": "openid profile offline_access User.Read User.ReadBasic.All",
            "graph_url": "https://graph.microsoft.com/v1.0",
            // Entra app registrations for desktop apps use http://localhost (port ignored).
            "redirect_host": "localhost",
        ]
    ]
}
