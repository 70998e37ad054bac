/// The credential plug-ins the lean client answers: git's and docker's helpers, as authkit's
/// adapters answer them (`GitCredentialAdapter`, `DockerCredentialAdapter`).
extension LeanTokenPlan {
    /// The plan for `credential git …`: `get` (its answer depends on git's request), and
    /// `store`, which authkit answers with nothing whatever the command line names (it reads
    /// nothing for it but the request); `erase` marks a token in the store, authkit's work.
    static func git(_ arguments: [String], environment: [String: String]) -> LeanTokenPlan {
        guard let (options, action, own) = credentialOptions(arguments, own: ["--username"]),
            !handedOffVariables.contains(where: { environment[$0].map { !$0.isEmpty } ?? false })
        else { return .handOff }
        switch action {
        case "store": return .gitStore
        case "get": return .gitGet(options, username: own["--username"])
        default: return .handOff
        }
    }

    /// What the lean client answers git's `get`.
    package enum GitAnswer: Equatable {
        /// Ask the agent at `socket` for `query`; answer with `username` and the token.
        case ask(AgentTokenQuery, socket: String?, username: String)
        /// No answer: git asks its next helper (a host no mapping names).
        case nothing
        /// authkit answers.
        case handOff
    }

    /// git's `get` answered as authkit answers it: for an https request, the sign-in the
    /// command line names (`--profile`, `--group`), else the configuration file's
    /// `[credential "URL"]` mapping for the URL (``CredentialMap``), the command line's account,
    /// scopes and resources over the mapping's; nothing for a host nothing maps.
    package static func gitAnswer(
        _ request: GitCredentialRequest, options: FastPathOptions, username: String?, environment: [String: String],
        configuration: (String) -> ConfigFile?, storageRecord: (String) -> [String: String]
    ) -> GitAnswer {
        // Never a token in the clear: plain http (loopback only, else refused with a reason) is
        // authkit's to judge; any other scheme gets nothing from it.
        guard request.scheme == "https" else { return request.scheme == "http" ? .handOff : .nothing }
        // (A request without a host gets nothing from a mapping: no file is read for it.)
        guard options.profile != nil || options.group != nil || !request.host.isEmpty else { return .nothing }
        let target: CredentialTarget
        switch plugInTarget(
            entry: "https://" + request.host, options: options, environment: environment, configuration: configuration,
            mapping: {
                file throws(ConfigProblem) in
                try CredentialMap.gitTarget(
                    protocol: request.scheme, host: request.host, path: request.path, username: request.username, in: file)
            })
        {
        case .target(let found): target = found
        case .unmapped: return .nothing
        case .handOff: return .handOff
        }
        let name = username ?? target.username
        guard GitCredentialRequest.isOneLine(name) else { return .handOff }
        guard
            let (query, socket) = signIn(
                target, options, environment: environment, configuration: configuration, storageRecord: storageRecord)
        else { return .handOff }
        return .ask(query, socket: socket, username: name)
    }

    /// Which sign-in a plug-in's request gets.
    enum PlugInTarget {
        case target(CredentialTarget)
        /// No mapping names it: the client's "nothing here".
        case unmapped
        case handOff
    }

    /// The sign-in the command line names (`--profile`, `--group`) for any `entry`, else the
    /// configuration file's `mapping` of the request, the command line's account, scopes and
    /// resources over it (a resource named in both places, differently, is authkit's to report).
    static func plugInTarget(
        entry: String, options: FastPathOptions, environment: [String: String], configuration: (String) -> ConfigFile?,
        mapping: (ConfigFile) throws(ConfigProblem) -> CredentialTarget?
    ) -> PlugInTarget {
        if options.profile != nil || options.group != nil {
            return .target(
                CredentialTarget(
                    entry: entry, profile: options.profile, group: options.group, account: options.account,
                    scopes: options.scopes.isEmpty ? nil : options.scopes, resources: options.resources, username: "oauth2"))
        }
        guard let home = environment["HOME"], home.hasPrefix("/"),
            let file = configuration(UserFiles.configPath(environment: environment) { home })
        else { return .handOff }
        let mapped: CredentialTarget?
        do throws(ConfigProblem) {
            mapped = try mapping(file)
        } catch {
            return .handOff
        }
        guard let mapped else { return .unmapped }
        guard let applied = mapped.applying(account: options.account, scopes: options.scopes, resources: options.resources) else {
            return .handOff
        }
        return .target(applied)
    }

    /// A credential plug-in's options as authkit's fast path takes them: the shared options, the
    /// action, and the plug-in's `own` options (one value each); nil for anything else.
    package static func credentialOptions(_ arguments: [String], own names: Set<String>) -> (
        FastPathOptions, action: String, own: [String: String]
    )? {
        var scanner = FastPathScanner(arguments: arguments, index: 2)
        guard let found = scanner.plugIn(minTTL: FastPathOptions.pluginMinTTL, takesAction: true, own: names), let action = found.action
        else { return nil }
        return (found.options, action, found.own)
    }

    /// The request authkit would send the agent for a plug-in's `target`: the sign-in it names,
    /// in the store the command line chose, else the mapping's.
    static func signIn(
        _ target: CredentialTarget, _ options: FastPathOptions, environment: [String: String], configuration: (String) -> ConfigFile?,
        storageRecord: (String) -> [String: String]
    ) -> (AgentTokenQuery, String?)? {
        var selected = FastPathOptions(minTTL: options.minTTL)
        selected.profile = target.profile
        selected.group = target.group
        selected.account = target.account
        selected.insecureStorage = options.insecureStorage
        selected.storage = options.storage ?? (options.insecureStorage ? nil : target.storage)
        selected.scopes = target.scopes ?? []
        selected.resources = target.resources
        return resolve(selected, environment: environment, configuration: configuration, storageRecord: storageRecord)
    }

    /// The names authkit answers a client's plug-in under (its `executableAlias`es), by client.
    package static let credentialAliases = [
        "git-credential-authkit": "git", "docker-credential-authkit": "docker", "cargo-credential-authkit": "cargo",
    ]

    /// The clients whose plug-in the lean client answers: the package points their links at it
    /// and `authkit setup` names it in their configuration (kubectl's, which has no link, too).
    /// Under another client's link name it hands everything to authkit.
    package static let plugInsAnswered: Set = ["git", "docker", "kubectl", "cargo"]

    /// The plan for `credential docker …`: `get`, `store` and `erase` (docker login and logout,
    /// which change nothing); `list` is authkit's.
    static func docker(_ arguments: [String], environment: [String: String]) -> LeanTokenPlan {
        guard let (options, action, _) = credentialOptions(arguments, own: []), ["get", "store", "erase"].contains(action),
            !handedOffVariables.contains(where: { environment[$0].map { !$0.isEmpty } ?? false })
        else { return .handOff }
        return .docker(options, action: action)
    }

    /// What the lean client answers docker.
    package enum DockerAnswer: Equatable {
        /// Ask the agent at `socket` for `query`; answer `{"ServerURL", "Username", "Secret"}`.
        case ask(AgentTokenQuery, socket: String?, server: String, username: String)
        /// No answer (`store`, `erase`).
        case nothing
        /// ``DockerCredentialText/notFound``, exit 1: a registry no mapping names.
        case notFound
        /// authkit answers.
        case handOff
    }

    /// docker's request answered as authkit answers it: `get` for the sign-in the command
    /// line names (`--profile`, `--group`), else the configuration file's `[registry "HOST"]`
    /// mapping (``CredentialMap``); not found for a registry nothing maps.
    package static func dockerAnswer(
        _ input: String, options: FastPathOptions, action: String, environment: [String: String],
        configuration: (String) -> ConfigFile?, storageRecord: (String) -> [String: String]
    ) -> DockerAnswer {
        guard action == "get" else { return .nothing }
        let server = DockerCredentialText.server(input)
        guard !server.isEmpty else { return .handOff }
        let target: CredentialTarget
        switch plugInTarget(
            entry: server, options: options, environment: environment, configuration: configuration,
            mapping: {
                CredentialMap.registryTarget(server: server, in: $0)
            })
        {
        case .target(let found): target = found
        case .unmapped: return .notFound
        case .handOff: return .handOff
        }
        guard
            let (query, socket) = signIn(
                target, options, environment: environment, configuration: configuration, storageRecord: storageRecord)
        else { return .handOff }
        return .ask(query, socket: socket, server: server, username: target.username)
    }
}
