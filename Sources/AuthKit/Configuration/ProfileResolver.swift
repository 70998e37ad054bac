import AuthKitCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What the command line says, before it is merged with environment and files.
public struct ProfileOverrides: Sendable, Equatable {
    /// The profile to use (`--profile`).
    public var profile: String?
    /// The issuer URL (`--issuer`).
    public var issuer: String?
    /// The tenant for a `{tenantid}` issuer (`--tenant`).
    public var tenant: String?
    /// The client id (`--client-id`).
    public var clientID: String?
    /// Added to the profile's scopes (like gh's `--scopes`).
    public var extraScopes: [String] = []
    /// The group (`--group`).
    public var group: String?
    /// The token store (`--storage`).
    public var storage: StorageChoice?
    /// The account to pre-fill on the provider's page (`--login-hint`).
    public var loginHint: String?
    /// Whether the sign-in binds its tokens to a key (`--dpop`).
    public var dpop: DPoPMode?
    /// The loopback redirect's port (`--redirect-port`).
    public var redirectPort: Int?
    /// The resources named at sign-in (`--resource`, repeatable; added to the profile's).
    public var resources: [String] = []

    /// Command-line values; `nil` leaves a setting to the environment, the file and the defaults.
    public init(
        profile: String? = nil, issuer: String? = nil, tenant: String? = nil, clientID: String? = nil,
        extraScopes: [String] = [], group: String? = nil, storage: StorageChoice? = nil, loginHint: String? = nil
    ) {
        self.profile = profile
        self.issuer = issuer
        self.tenant = tenant
        self.clientID = clientID
        self.extraScopes = extraScopes
        self.group = group
        self.storage = storage
        self.loginHint = loginHint
    }
}

/// Merges flags, environment, the configuration file and built-in profiles into a
/// ``Profile``. Precedence, strongest first: flag, environment variable, the selected
/// profile's section in the file, `[defaults]` (group and storage), a built-in profile of
/// that name, authkit's defaults.
///
/// | setting | flag | environment | file key |
/// |---|---|---|---|
/// | profile | `--profile` | `AUTHKIT_PROFILE` | `[defaults] profile` |
/// | issuer | `--issuer` | `AUTHKIT_ISSUER` | `issuer` |
/// | tenant | `--tenant` | `AUTHKIT_TENANT` | `tenant` |
/// | client id | `--client-id` | `AUTHKIT_CLIENT_ID` | `client_id` |
/// | client secret | — (never a flag: `ps` shows flags) | `AUTHKIT_CLIENT_SECRET` | `client_secret` |
/// | scopes | `--scope` (adds) | `AUTHKIT_SCOPES` | `scopes` |
/// | group | `--group` | `AUTHKIT_GROUP` | `group` |
/// | storage | `--insecure-storage` | `AUTHKIT_STORAGE` | `storage` |
/// | Graph URL | — | `AUTHKIT_GRAPH_URL` | `graph_url` |
/// | DPoP | `--dpop` | `AUTHKIT_DPOP` | `dpop` |
/// | redirect port | `--redirect-port` | — | `redirect_port` |
/// | resources named at sign-in | `--resource` (adds) | — | `resources` |
public struct ProfileResolver: Sendable {
    package var file: ConfigFile
    package var environment: [String: String]

    package init(file: ConfigFile, environment: [String: String]) {
        self.file = file
        self.environment = environment
    }

    /// Loads the configuration file named by the environment and returns a resolver.
    public static func load(environment: [String: String]) throws(ConfigurationError) -> ProfileResolver {
        ProfileResolver(file: try ConfigFile.load(environment: environment), environment: environment)
    }

    private struct Layer {
        var name: String
        var values: [String: String]
        var location: (String) -> String
    }

    /// The profile these overrides select, every value from its strongest source.
    /// - Throws: ``ConfigurationError`` naming the file and line, variable or flag at fault.
    public func resolve(_ overrides: ProfileOverrides = ProfileOverrides()) throws(ConfigurationError) -> Profile {
        // Which profile.
        var profileName: String?
        var profileSource = ""
        if let name = overrides.profile, !name.isEmpty {
            (profileName, profileSource) = (name, "--profile")
        } else if let name = environment["AUTHKIT_PROFILE"], !name.isEmpty {
            (profileName, profileSource) = (name, "environment variable AUTHKIT_PROFILE")
        } else if let entry = file.defaults?.entries["profile"] {
            (profileName, profileSource) = (entry.value, "\(file.path):\(entry.line)")
        }
        if let profileName, let problem = file.profileProblems[profileName]?.first {
            throw ConfigurationError(problem)
        }
        let section = profileName.flatMap { file.profiles[$0] }
        let builtIn = profileName.flatMap { Profile.builtIn[$0] }
        if let profileName, section == nil, builtIn == nil {
            let known = (Array(file.profiles.keys) + Array(Profile.builtIn.keys)).sorted()
            throw ConfigurationError(
                location: profileSource, key: "profile",
                problem: "there is no profile ‘\(profileName)’ (known: \(known.joined(separator: ", ")))")
        }

        // Layers, strongest first.
        var flags: [String: String] = [:]
        flags["issuer"] = overrides.issuer
        flags["tenant"] = overrides.tenant
        flags["client_id"] = overrides.clientID
        flags["group"] = overrides.group
        flags["storage"] = overrides.storage?.rawValue
        flags["login_hint"] = overrides.loginHint
        flags["dpop"] = overrides.dpop?.rawValue
        flags["redirect_port"] = overrides.redirectPort.map(String.init)
        let flagNames = [
            "issuer": "--issuer", "tenant": "--tenant", "client_id": "--client-id", "group": "--group",
            "storage": "--storage", "login_hint": "--login-hint", "dpop": "--dpop", "redirect_port": "--redirect-port",
        ]
        let environmentNames = [
            "issuer": "AUTHKIT_ISSUER", "tenant": "AUTHKIT_TENANT", "client_id": "AUTHKIT_CLIENT_ID",
            "client_secret": "AUTHKIT_CLIENT_SECRET", "scopes": "AUTHKIT_SCOPES", "group": "AUTHKIT_GROUP",
            "storage": "AUTHKIT_STORAGE", "graph_url": "AUTHKIT_GRAPH_URL", "dpop": "AUTHKIT_DPOP",
        ]
        var fromEnvironment: [String: String] = [:]
        for (key, variable) in environmentNames {
            if let value = environment[variable], !value.isEmpty { fromEnvironment[key] = value }
        }
        var defaultsValues: [String: String] = [:]
        for key in ["group", "storage"] { defaultsValues[key] = file.defaults?.entries[key]?.value }

        let layers: [Layer] = [
            Layer(name: "flags", values: flags.filter { !$0.value.isEmpty }) { flagNames[$0] ?? $0 },
            Layer(name: "environment", values: fromEnvironment) { "environment variable \(environmentNames[$0] ?? $0)" },
            Layer(name: "file", values: section?.entries.mapValues(\.value) ?? [:]) { key in
                "\(file.path):\(section?.entries[key]?.line ?? 0)"
            },
            Layer(name: "defaults", values: defaultsValues) { key in "\(file.path):\(file.defaults?.entries[key]?.line ?? 0)" },
            Layer(name: "built-in", values: builtIn ?? [:]) { _ in "built-in profile \(profileName ?? "")" },
        ]
        var sources: [String: String] = [:]
        func value(_ key: String) -> String? {
            for layer in layers {
                if let value = layer.values[key] {
                    sources[key] = layer.location(key)
                    return value
                }
            }
            return nil
        }
        func location(_ key: String) -> String { sources[key] ?? "configuration" }

        var profile = Profile(
            name: profileName, issuer: nil, tenant: nil, clientID: nil, clientSecret: nil,
            scopes: Profile.defaultScopes, group: Profile.defaultGroup, redirectPath: "/", redirectHost: .loopbackAddress,
            graphBaseURL: nil, storage: .secretService, loginHint: nil, prompt: nil, domainHint: nil, sources: [:])

        if let issuer = value("issuer") {
            profile.issuer = try Self.checkIssuer(issuer, location: location("issuer"))
        }
        if let tenant = value("tenant") {
            guard IssuerMatcher.isSafeTenant(tenant) else {
                throw ConfigurationError(
                    location: location("tenant"), key: "tenant", problem: "a tenant is a name or id without / ? # or spaces")
            }
            profile.tenant = tenant
        }
        if let clientID = value("client_id") {
            guard clientID.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value != 0x7F }), clientID.count <= 256 else {
                throw ConfigurationError(
                    location: location("client_id"), key: "client_id", problem: "a client id has no spaces or control characters")
            }
            profile.clientID = clientID
        }
        if let secret = value("client_secret") { profile.clientSecret = ClientSecret(secret) }
        if let scopes = value("scopes") {
            profile.scopes = scopes.split(whereSeparator: { $0 == " " || $0 == "," }).map(String.init)
        }
        for scope in overrides.extraScopes {
            for part in scope.split(whereSeparator: { $0 == " " || $0 == "," }).map(String.init) where !profile.scopes.contains(part) {
                profile.scopes.append(part)
            }
        }
        if let bad = profile.scopes.first(where: { $0.contains("\"") || $0.contains("\\") }) {
            throw ConfigurationError(location: location("scopes"), key: "scopes", problem: "‘\(bad)’ is not a valid scope")
        }
        if !profile.scopes.contains("openid") { profile.scopes.insert("openid", at: 0) }
        if let group = value("group") {
            guard GroupName.isValid(group) else {
                throw ConfigurationError(
                    location: location("group"), key: "group",
                    problem: "‘\(group)’ is not a valid group (reverse-DNS style: letters, digits, . _ -)")
            }
            profile.group = group
        }
        if let path = value("redirect_path") {
            guard path.hasPrefix("/"), !path.contains("?"), !path.contains("#"), !path.contains(" ") else {
                throw ConfigurationError(
                    location: location("redirect_path"), key: "redirect_path", problem: "it must start with / and contain no ?, # or spaces"
                )
            }
            profile.redirectPath = path
        }
        if let host = value("redirect_host") {
            guard let choice = LoopbackRedirectReceiver.RedirectHost(rawValue: host) else {
                throw ConfigurationError(location: location("redirect_host"), key: "redirect_host", problem: "use 127.0.0.1 or localhost")
            }
            profile.redirectHost = choice
        }
        if let port = value("redirect_port") {
            guard let number = Int(port), (1...65535).contains(number) else {
                throw ConfigurationError(
                    location: location("redirect_port"), key: "redirect_port",
                    problem: "a port is a number from 1 to 65535 (leave it unset for any free port, as RFC 8252 §7.3 lets providers allow)")
            }
            profile.redirectPort = number
        }
        if let listed = value("resources") {
            profile.resources = listed.split(whereSeparator: { $0 == " " || $0 == "," }).map(String.init)
        }
        for resource in overrides.resources where !profile.resources.contains(resource) { profile.resources.append(resource) }
        if let bad = profile.resources.first(where: { !TokenText.isResource($0) }) {
            throw ConfigurationError(
                location: location("resources"), key: "resources", problem: "‘\(bad)’ is not an absolute URI without a fragment (RFC 8707)")
        }
        if let dpop = value("dpop") {
            guard let mode = DPoPMode(rawValue: dpop) else {
                throw ConfigurationError(location: location("dpop"), key: "dpop", problem: "use auto, always or never")
            }
            profile.dpop = mode
        }
        if let graph = value("graph_url") {
            do {
                _ = try EndpointPolicy.check(graph, name: "graph_url")
            } catch {
                throw ConfigurationError(location: location("graph_url"), key: "graph_url", problem: error.description)
            }
            profile.graphBaseURL = graph.trimmingSuffix("/")
        }
        if let storage = value("storage") {
            guard let choice = StorageChoice(rawValue: storage) else {
                throw ConfigurationError(
                    location: location("storage"), key: "storage", problem: "use \(StorageChoice.names)")
            }
            profile.storage = choice
        } else if let recorded = StorageRecord.choice(for: profile.group, environment: environment) {
            profile.storage = recorded
            sources["storage"] = "where the group's last sign-in was saved (\(StorageRecord.path(environment: environment)))"
        }
        profile.loginHint = value("login_hint")
        profile.prompt = value("prompt")
        profile.domainHint = value("domain_hint")
        if profileName != nil { sources["profile"] = profileSource }
        profile.sources = sources
        return profile
    }

    /// One line per broken `[profile NAME]` section other than `profile`'s, for a command that
    /// does not use it: where the first problem is, and that only that profile is affected.
    public func warnings(using profile: Profile) -> [String] {
        file.profileProblems.keys.sorted().compactMap { name in
            guard name != profile.name, let problem = file.profileProblems[name]?.first else { return nil }
            return "\(problem) (in [profile \(name)], not used here; commands using it fail until it is fixed)"
        }
    }

    static func checkIssuer(_ issuer: String, location: String) throws(ConfigurationError) -> String {
        do {
            let url = try EndpointPolicy.check(issuer.replacing(IssuerMatcher.placeholder, with: "common"), name: "the issuer")
            guard url.query == nil else { throw ConfigurationError(location: location, key: "issuer", problem: "an issuer has no query") }
        } catch let error as ConfigurationError {
            throw error
        } catch {
            throw ConfigurationError(location: location, key: "issuer", problem: "\(error)")
        }
        return issuer
    }
}
