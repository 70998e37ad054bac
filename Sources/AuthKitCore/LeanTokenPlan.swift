import StrictJSON

/// When the lean client answers `authkit token` itself, from the agent (or, where there is
/// none, from the store: `StoredTokenRecord`): only when the command line, the environment and
/// the files say exactly what `authkit` would ask the agent for, and nothing `authkit` would
/// check could fail. Everything else is handed to `authkit` with the
/// same arguments, so what is printed and the exit code are always `authkit`'s.
///
/// A plan, made without I/O of its own: the caller reads the configuration file and the
/// storage record.
package enum LeanTokenPlan: Equatable {
    /// `authkit token`: ask the agent at `socket` for `query` (none: no agent is to be asked,
    /// and authkit reads the store); print the token if it lives `query.minTTL`.
    case ask(AgentTokenQuery, socket: String?)
    /// `authkit credential kubectl`: ask the agent at `socket` for `query`; answer kubectl with
    /// an `ExecCredential` of `apiVersion`.
    case kubectl(AgentTokenQuery, socket: String?, apiVersion: String)
    /// `authkit credential git get`: read git's request, then answer as ``gitAnswer(_:options:username:environment:configuration:storageRecord:)``
    /// says, with the command line's `options` and `--username`.
    case gitGet(FastPathOptions, username: String?)
    /// `authkit credential git store`: read git's request; a sound one gets no answer (git
    /// stores after every success, and the shared sign-in keeps nothing of it).
    case gitStore
    /// `authkit credential docker get|store|erase` (docker runs `docker-credential-authkit
    /// ACTION`): read docker's request, then answer as ``dockerAnswer(_:options:action:environment:configuration:storageRecord:)`` says.
    case docker(FastPathOptions, action: String)
    /// `authkit credential cargo` (cargo runs `PROGRAM --cargo-plugin`): greet cargo, read its
    /// request line, then answer as ``cargoAnswer(_:options:environment:configuration:storageRecord:)`` says.
    case cargo(FastPathOptions)
    /// `authkit exec`: ask the agent at `socket` for `query` (its program filled in by the
    /// caller, `ExecRules.programPath`), put the token in `variable`, and run `command` in this
    /// process's place.
    case exec(AgentTokenQuery, socket: String?, variable: String, command: [String])
    /// Run `authkit` with the same arguments.
    case handOff

    /// Variables that change what `authkit token` checks or prints, which the lean client
    /// leaves to it: a profile's settings (each checked by authkit), logging, a forward's key, a
    /// refusal handed over. (`AUTHKIT_CONFIG` names the file read, as for authkit.)
    package static let handedOffVariables = [
        "AUTHKIT_PROFILE", "AUTHKIT_ISSUER", "AUTHKIT_TENANT", "AUTHKIT_CLIENT_ID", "AUTHKIT_CLIENT_SECRET",
        "AUTHKIT_SCOPES", "AUTHKIT_GRAPH_URL", "AUTHKIT_DPOP", "AUTHKIT_LOG", "AUTHKIT_FORWARD_KEY",
        // A refusal already handed to this process: authkit takes it (when it is this
        // process's) without asking the agent.
        "AUTHKIT_AGENT_ANSWER",
    ]

    /// The plan for `arguments` (without the program's name, `program`).
    /// - Parameters:
    ///   - configuration: the configuration file at a path as authkit reads it
    ///     (`ConfigFile.load`; an empty one when there is none), or nil where authkit would
    ///     report a problem with it.
    ///   - storageRecord: the storage record's lines (`GroupStateLines`) at a path.
    package static func make(
        arguments: [String], program: String = "authkit", environment: [String: String], configuration: (String) -> ConfigFile?,
        storageRecord: (String) -> [String: String]
    ) -> LeanTokenPlan {
        // authkit reads `token` before it looks at its own name; a plug-in's name changes its
        // arguments (docker-credential-authkit …), so a plug-in is answered only under authkit's.
        if arguments.first == "token" {
            var scanner = FastPathScanner(arguments: arguments, index: 1)
            var options = FastPathOptions(minTTL: FastPathOptions.tokenMinTTL)
            while scanner.index < arguments.count {
                guard case .handled = scanner.shared(arguments[scanner.index], into: &options) else { return .handOff }
                scanner.index += 1
            }
            guard
                let (query, socket) = resolve(options, environment: environment, configuration: configuration, storageRecord: storageRecord)
            else {
                return .handOff
            }
            return .ask(query, socket: socket)
        }
        if arguments.first == "exec" {
            guard program == "authkit" || program == "authkit-lean" else { return .handOff }
            return exec(arguments, environment: environment, configuration: configuration, storageRecord: storageRecord)
        }
        // Run under a client's own name, the client passes only its action (authkit's main does
        // the same); under another name, only authkit's are the lean client's to answer.
        var arguments = arguments
        if let client = credentialAliases[program] {
            arguments = ["credential", client] + arguments
        } else if program != "authkit" && program != "authkit-lean" {
            return .handOff
        } else if arguments == ["--cargo-plugin"] {
            // cargo runs a provider as `PROGRAM --cargo-plugin` whatever its configuration says.
            arguments = ["credential", "cargo"] + arguments
        }
        guard arguments.count >= 2, arguments[0] == "credential" else { return .handOff }
        if arguments[1] == "git" { return git(arguments, environment: environment) }
        if arguments[1] == "docker" { return docker(arguments, environment: environment) }
        if arguments[1] == "cargo" { return cargo(arguments, environment: environment) }
        guard arguments[1] == "kubectl", let (options, servers) = kubectlOptions(arguments),
            let apiVersion = kubectlServes(environment["KUBERNETES_EXEC_INFO"], boundTo: servers),
            let (query, socket) = resolve(options, environment: environment, configuration: configuration, storageRecord: storageRecord)
        else { return .handOff }
        return .kubectl(query, socket: socket, apiVersion: apiVersion)
    }

    /// `credential kubectl`'s options as authkit's fast path takes them, and its `--server`
    /// values; nil for anything but an access token's plain request.
    package static func kubectlOptions(_ arguments: [String]) -> (FastPathOptions, [String]?)? {
        var scanner = FastPathScanner(arguments: arguments, index: 2)
        // (kubectl's plug-in takes no action.)
        guard
            let found = scanner.plugIn(
                minTTL: FastPathOptions.pluginMinTTL, takesAction: false, own: ["--token-type"], repeated: ["--server"])
        else { return nil }
        // (An id_token is checked against the provider's keys: authkit's work.)
        guard found.own["--token-type"].map({ $0 == "access-token" }) ?? true else { return nil }
        return (found.options, found.ownLists["--server"])
    }

    /// The `ExecCredential` apiVersion kubectl asked for when the lean client may answer it:
    /// `KUBERNETES_EXEC_INFO` read as authkit reads it, the API server one of `servers` (when
    /// the plug-in is bound) and a plain https URL; nil when authkit is to answer.
    package static func kubectlServes(_ info: String?, boundTo servers: [String]?) -> String? {
        var parsed: JSONValue?
        if let info, !info.isEmpty {
            guard let value = try? JSONValue(parsing: info, limits: KubectlExecInfo.limits) else { return nil }
            parsed = value
        }
        let apiVersion: String
        if let parsed {
            guard let version = parsed["apiVersion"]?.stringValue, version == KubectlExecInfo.v1 || version == KubectlExecInfo.v1beta1
            else { return nil }
            apiVersion = version
        } else {
            apiVersion = KubectlExecInfo.v1beta1
        }
        let asked = KubectlExecInfo.server(parsed)
        if let servers {
            guard let asked, servers.contains(where: { KubectlExecInfo.normalized($0) == KubectlExecInfo.normalized(asked) }) else {
                return nil
            }
        }
        if let asked, !KubectlExecInfo.isPlainHTTPS(asked) { return nil }
        return apiVersion
    }

    /// The request authkit would send the agent for `options`, and the socket, or nil when
    /// authkit is to decide: the group and store resolved as `ProfileResolver` resolves them —
    /// flags, the environment, the selected profile's section (`--profile`, else `[defaults]`'s), `[defaults]`, a built-in
    /// profile, the storage record — only when every setting of the profile passes its checks
    /// (``ProfileSettings``) and no other profile has a problem to warn of.
    static func resolve(
        _ options: FastPathOptions, environment: [String: String], configuration: (String) -> ConfigFile?,
        storageRecord: (String) -> [String: String]
    ) -> (AgentTokenQuery, String?)? {
        func named(_ variable: String) -> String? {
            guard let value = environment[variable], !value.isEmpty else { return nil }
            return value
        }
        guard !handedOffVariables.contains(where: { named($0) != nil }) else { return nil }
        // (A relative HOME sends authkit to the password database.)
        guard let home = named("HOME"), home.hasPrefix("/"),
            let file = configuration(UserFiles.configPath(environment: environment) { home }), file.profileProblems.isEmpty
        else { return nil }
        // The profile's settings, each from its strongest layer below the command line and the
        // environment: its section, then [defaults] (group and storage), then a built-in profile.
        var settings: [String: String] = [:]
        if let name = options.profile.flatMap({ $0.isEmpty ? nil : $0 }) ?? file.defaults?.entries["profile"]?.value {
            let section = file.profiles[name], builtIn = BuiltInProfiles.all[name]
            guard section != nil || builtIn != nil else { return nil }
            settings = builtIn ?? [:]
            for key in ["group", "storage"] { settings[key] = file.defaults?.entries[key]?.value ?? settings[key] }
            for (key, entry) in section?.entries ?? [:] { settings[key] = entry.value }
        } else {
            for key in ["group", "storage"] { settings[key] = file.defaults?.entries[key]?.value }
        }
        // The group: a flag, else AUTHKIT_GROUP, else the profile's, else the default; a
        // forward's own group, when nothing names one, is found by asking it (authkit does that).
        if let flagged = options.group, !flagged.isEmpty {
            settings["group"] = flagged
        } else if let variable = named("AUTHKIT_GROUP") {
            settings["group"] = variable
        }
        guard settings["group"] != nil || named("AUTHKIT_AGENT_SOCK") == nil else { return nil }
        // The store: a flag, else AUTHKIT_STORAGE, else the profile's.
        if let flagged = options.storage ?? (options.insecureStorage ? StoreNames.plainFile : nil) {
            settings["storage"] = flagged
        } else if let variable = named("AUTHKIT_STORAGE") {
            settings["storage"] = variable
        }
        guard settings.allSatisfy({ ProfileSettings.passes($0.key, $0.value) }) else { return nil }
        let group = settings["group"] ?? GroupName.defaultGroup
        // (A group the stores refuse, one that starts with `.`, `_` or `-`, is authkit's to report.)
        guard GroupName.isStoreName(group) else { return nil }
        // Else the group's storage record, else the Secret Service.
        let store =
            settings["storage"]
            ?? storageRecord(UserFiles.statePath("storage", environment: environment) { home })[group].flatMap {
                StoreNames.all.contains($0) ? $0 : nil
            } ?? StoreNames.secretService
        // (None: `AUTHKIT_AGENT=off`, or nowhere to look for one; authkit then reads the store.)
        let socket = AgentExchange.clientSocketPath(environment: environment)
        let query = AgentTokenQuery(
            group: group, storage: store, account: options.account ?? named("AUTHKIT_ACCOUNT"), scopes: options.scopes,
            resources: options.resources, minTTL: options.minTTL)
        return (query, socket)
    }
}
