/// Which sign-in a credential plug-in gives to which host: the policy every adapter (git,
/// docker) shares, read from the config file's `[credential "URL"]` and `[registry "HOST"]`
/// sections. A host with no entry gets nothing — so a malicious remote URL in a cloned
/// repository, or a registry named in a Dockerfile, cannot harvest the sign-in's token.
///
/// ```ini
/// [credential "https://dev.azure.com"]
/// profile = microsoft
/// scopes = 499b84ac-1321-427f-aa17-267ca6975798/.default
/// username = oauth2
///
/// [credential "https://git.example.com"]
/// group = com.example.shared
/// resource = https://git.example.com/
///
/// [registry "registry.example.com"]
/// group = com.example.shared
/// storage = kernel-keyring
/// ```
package struct CredentialTarget: Sendable, Equatable {
    /// The section's name as written (the URL or registry host), for messages.
    package var entry: String
    /// The profile whose sign-in to use (its group and store), when set.
    package var profile: String?
    /// The group, when set (else the profile's).
    package var group: String?
    /// The account, when the group holds several.
    package var account: String?
    /// Scopes other than the sign-in's own (a per-resource token), when set.
    package var scopes: [String]?
    /// The APIs the token is for (RFC 8707), when set: the client gets a token for them only.
    package var resources: [String]
    /// The user name to pair with the token (`oauth2` unless set).
    package var username: String
    /// The store the sign-in lives in (its name, `StoreNames`), when the mapping names one (a
    /// client that runs the plug-in cannot pass `--storage`, e.g. docker).
    package var storage: String?

    /// A target from a config section's entries.
    init(entry: String, section: ConfigFile.Section) {
        self.entry = entry
        profile = section.entries["profile"]?.value
        group = section.entries["group"]?.value
        account = section.entries["account"]?.value
        let scopes = section.entries["scopes"]?.value.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init) ?? []
        self.scopes = scopes.isEmpty ? nil : scopes
        resources = section.entries["resource"]?.value.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init) ?? []
        username = section.entries["username"]?.value ?? "oauth2"
        storage = section.entries["storage"]?.value  // (a store's name: the parser checked it)
    }

    /// A target with everything given (the plug-ins' flag form).
    package init(
        entry: String, profile: String?, group: String?, account: String?, scopes: [String]?, resources: [String] = [], username: String
    ) {
        self.entry = entry
        self.profile = profile
        self.group = group
        self.account = account
        self.scopes = scopes
        self.resources = resources
        self.username = username
    }

    /// This mapping with the command line's account, scopes and resources over its own; nil
    /// when both name resources and they differ (a person is to name them in one place).
    package func applying(account: String?, scopes: [String], resources: [String]) -> CredentialTarget? {
        var target = self
        if let account { target.account = account }
        if !scopes.isEmpty { target.scopes = scopes }
        if !resources.isEmpty {
            guard self.resources.isEmpty || Set(self.resources) == Set(resources) else { return nil }
            target.resources = resources
        }
        return target
    }
}
