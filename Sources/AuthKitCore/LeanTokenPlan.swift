/// When the lean client answers `authkit token` itself, from the agent: only when the command
/// line, the environment and the files say exactly what `authkit` would ask the agent for, and
/// nothing `authkit` would check could fail. Everything else is handed to `authkit` with the
/// same arguments, so what is printed and the exit code are always `authkit`'s.
///
/// A plan, made without I/O of its own: the caller says which files exist and what the
/// storage record holds.
package enum LeanTokenPlan: Equatable {
    /// Ask the agent at `socket` for `query`; print the token if it lives `query.minTTL`.
    case ask(AgentTokenQuery, socket: String)
    /// Run `authkit` with the same arguments.
    case handOff

    /// Variables that change what `authkit token` checks or prints, which the lean client
    /// leaves to it: a profile's settings (each checked by authkit), a configuration file named
    /// outright, logging, a forward's key.
    package static let handedOffVariables = [
        "AUTHKIT_PROFILE", "AUTHKIT_CONFIG", "AUTHKIT_ISSUER", "AUTHKIT_TENANT", "AUTHKIT_CLIENT_ID", "AUTHKIT_CLIENT_SECRET",
        "AUTHKIT_SCOPES", "AUTHKIT_GRAPH_URL", "AUTHKIT_DPOP", "AUTHKIT_LOG", "AUTHKIT_FORWARD_KEY",
    ]

    /// The plan for `arguments` (without the program's name).
    /// - Parameters:
    ///   - exists: whether a file is there: true, false (no such file), or nil (cannot tell).
    ///   - storageRecord: the storage record's lines (`GroupStateLines`) at a path.
    package static func make(
        arguments: [String], environment: [String: String], exists: (String) -> Bool?, storageRecord: (String) -> [String: String]
    ) -> LeanTokenPlan {
        guard arguments.first == "token" else { return .handOff }
        var scanner = FastPathScanner(arguments: arguments, index: 1)
        var options = FastPathOptions(minTTL: FastPathOptions.tokenMinTTL)
        while scanner.index < arguments.count {
            guard case .handled = scanner.shared(arguments[scanner.index], into: &options) else { return .handOff }
            scanner.index += 1
        }
        func named(_ variable: String) -> String? {
            guard let value = environment[variable], !value.isEmpty else { return nil }
            return value
        }
        guard options.profile == nil, !handedOffVariables.contains(where: { named($0) != nil }) else { return .handOff }
        // The configuration file: only its absence is read here. (A relative HOME sends
        // authkit to the password database.)
        guard let home = named("HOME"), home.hasPrefix("/") else { return .handOff }
        guard exists(UserFiles.configPath(environment: environment) { home }) == false else { return .handOff }
        // The group: a flag, else AUTHKIT_GROUP, else the default; a forward's own group is
        // found by asking it (authkit does that).
        let explicitGroup = options.group.flatMap { $0.isEmpty ? nil : $0 } ?? named("AUTHKIT_GROUP")
        guard explicitGroup != nil || named("AUTHKIT_AGENT_SOCK") == nil else { return .handOff }
        let group = explicitGroup ?? GroupName.defaultGroup
        // (A group the stores refuse, one that starts with `.`, `_` or `-`, is authkit's to report.)
        guard GroupName.isValid(group), let first = group.utf8.first, first != UInt8(ascii: "."), first != UInt8(ascii: "_"),
            first != UInt8(ascii: "-")
        else { return .handOff }
        // The store: a flag, else AUTHKIT_STORAGE, else the group's storage record, else the
        // Secret Service.
        let store: String
        if let flagged = options.storage ?? (options.insecureStorage ? StoreNames.plainFile : nil) {
            store = flagged
        } else if let variable = named("AUTHKIT_STORAGE") {
            guard StoreNames.all.contains(variable) else { return .handOff }
            store = variable
        } else {
            let recorded = storageRecord(UserFiles.statePath("storage", environment: environment) { home })[group]
            store = recorded.flatMap { StoreNames.all.contains($0) ? $0 : nil } ?? StoreNames.secretService
        }
        guard let socket = AgentExchange.clientSocketPath(environment: environment) else { return .handOff }
        let query = AgentTokenQuery(
            group: group, storage: store, account: options.account ?? named("AUTHKIT_ACCOUNT"), scopes: options.scopes,
            resources: options.resources, minTTL: options.minTTL)
        return .ask(query, socket: socket)
    }
}
