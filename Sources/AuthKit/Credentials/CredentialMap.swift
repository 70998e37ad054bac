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
/// [registry "registry.example.com"]
/// group = com.example.shared
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
    /// The user name to pair with the token (`oauth2` unless set).
    package var username: String

    /// A target from a config section's entries.
    init(entry: String, section: ConfigFile.Section) {
        self.entry = entry
        profile = section.entries["profile"]?.value
        group = section.entries["group"]?.value
        account = section.entries["account"]?.value
        let scopes = section.entries["scopes"]?.value.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init) ?? []
        self.scopes = scopes.isEmpty ? nil : scopes
        username = section.entries["username"]?.value ?? "oauth2"
    }

    /// A target with everything given (the plug-ins' flag form).
    package init(entry: String, profile: String?, group: String?, account: String?, scopes: [String]?, username: String) {
        self.entry = entry
        self.profile = profile
        self.group = group
        self.account = account
        self.scopes = scopes
        self.username = username
    }
}

/// Finds the ``CredentialTarget`` for a git URL or a docker registry in a config file.
package enum CredentialMap {
    /// The entry for git's request (`protocol`, `host` with an optional port, and `path` when
    /// git sends it, i.e. with `credential.useHttpPath`), chosen as git chooses among
    /// `credential.<url>.*` settings: same scheme, same host and port, and a path the entry's
    /// path is a prefix of (by whole segments); the most specific entry wins. Nil when no
    /// entry matches.
    package static func gitTarget(protocol scheme: String, host: String, path: String?, in file: ConfigFile) -> CredentialTarget? {
        let wantedHost = host.lowercased()
        let wantedPath = (path ?? "").split(separator: "/").map(String.init)
        var best: (length: Int, target: CredentialTarget)?
        for (url, section) in file.credentials {
            guard let entry = ParsedURL(url) else { continue }
            guard entry.scheme == scheme.lowercased(), entry.host == wantedHost else { continue }
            guard entry.path.count <= wantedPath.count, Array(wantedPath.prefix(entry.path.count)) == entry.path else { continue }
            if best == nil || entry.path.count > best!.length {
                best = (entry.path.count, CredentialTarget(entry: url, section: section))
            }
        }
        return best?.target
    }

    /// The entry for a docker registry as the docker CLI names it (`registry.example.com`,
    /// `localhost:5000`, `https://index.docker.io/v1/`): compared by host and port, ignoring
    /// scheme, path and case. Nil when no entry matches.
    package static func registryTarget(server: String, in file: ConfigFile) -> CredentialTarget? {
        let wanted = registryHost(server)
        guard !wanted.isEmpty else { return nil }
        for (name, section) in file.registries.sorted(by: { $0.key < $1.key }) where registryHost(name) == wanted {
            return CredentialTarget(entry: name, section: section)
        }
        return nil
    }

    /// The mapped registries with their user names (docker's `list`).
    package static func registries(in file: ConfigFile) -> [(server: String, username: String)] {
        file.registries.sorted { $0.key < $1.key }.map { ($0.key, CredentialTarget(entry: $0.key, section: $0.value).username) }
    }

    /// `host[:port]` of a registry reference, lowercased, without scheme or path.
    package static func registryHost(_ server: String) -> String {
        var text = Substring(server.trimmingASCIIWhitespace())
        if let scheme = text.firstRange(of: "://") { text = text[scheme.upperBound...] }
        if let slash = text.firstIndex(of: "/") { text = text[..<slash] }
        return text.lowercased()
    }

    /// A `[credential "URL"]` name taken apart: scheme, host (with `:port`), path segments.
    struct ParsedURL {
        var scheme: String
        var host: String
        var path: [String]

        init?(_ url: String) {
            guard let separator = url.firstRange(of: "://") else { return nil }
            scheme = url[..<separator.lowerBound].lowercased()
            var rest = url[separator.upperBound...]
            if let at = rest.firstIndex(of: "@"), rest[..<at].firstIndex(of: "/") == nil { rest = rest[rest.index(after: at)...] }
            let slash = rest.firstIndex(of: "/") ?? rest.endIndex
            host = rest[..<slash].lowercased()
            path = rest[slash...].split(separator: "/").map(String.init)
            guard !host.isEmpty else { return nil }
        }
    }
}
