/// cargo's credential provider, as authkit's adapter answers it (`CargoCredentialAdapter`):
/// its hello first, then one request line.
extension LeanTokenPlan {
    /// The variable the lean client sets to its process id when it hands authkit a plug-in
    /// whose client it already greeted (cargo's hello): authkit, in that same process, then
    /// does not greet again.
    package static let greetedVariable = "AUTHKIT_PLUGIN_GREETED"

    /// Whether `value`, the ``greetedVariable``'s, says the process `pid` already greeted.
    package static func greeted(_ value: String?, pid: Int32) -> Bool {
        value == String(pid)
    }

    /// The plan for `credential cargo …` (cargo runs `PROGRAM --cargo-plugin`; its options come
    /// in the request).
    static func cargo(_ arguments: [String], environment: [String: String]) -> LeanTokenPlan {
        var scanner = FastPathScanner(arguments: arguments, index: 2)
        guard let found = scanner.plugIn(minTTL: FastPathOptions.pluginMinTTL, takesAction: false, ownFlags: ["--cargo-plugin"]),
            !handedOffVariables.contains(where: { environment[$0].map { !$0.isEmpty } ?? false })
        else { return .handOff }
        return .cargo(found.options)
    }

    /// What the lean client answers cargo's request.
    package enum CargoAnswer: Equatable {
        /// Ask the agent at `socket` for `query`; answer `Bearer TOKEN`.
        case ask(AgentTokenQuery, socket: String?)
        /// An `{"Err": {"kind": …}}` answer without a message: `url-not-supported` for an index
        /// nothing maps (cargo tries its next provider), `operation-not-supported` for login and
        /// logout.
        case refused(kind: String)
        /// authkit answers.
        case handOff
    }

    /// cargo's request answered as authkit answers it: `get` for the sign-in the command line
    /// and the request's options name (`--profile`, `--group`), else the configuration file's
    /// `[credential "URL"]` mapping of the index URL (``CredentialMap``); an index of the
    /// plainest kind only (`PlainURL`: https, or http on loopback), which authkit judges alike.
    package static func cargoAnswer(
        _ request: CargoCredentialText.Request, options: FastPathOptions, environment: [String: String],
        configuration: (String) -> ConfigFile?, storageRecord: (String) -> [String: String]
    ) -> CargoAnswer {
        guard request.kind == "get" else { return .refused(kind: "operation-not-supported") }
        // The request's options over the command line's, as authkit takes them.
        var options = options
        let words = request.options
        var scanner = FastPathScanner(arguments: words, index: 0)
        while scanner.index < words.count {
            guard case .handled = scanner.shared(words[scanner.index], into: &options) else { return .handOff }
            scanner.index += 1
        }
        let url = CargoCredentialText.fetchedURL(request.indexURL)
        guard PlainURL.isPlain(url, loopbackHTTP: true) else { return .handOff }
        let target: CredentialTarget
        switch plugInTarget(
            entry: request.indexURL, options: options, environment: environment, configuration: configuration,
            mapping: {
                file throws(ConfigProblem) in try CredentialMap.urlTarget(url, in: file)
            })
        {
        case .target(let found): target = found
        case .unmapped: return .refused(kind: "url-not-supported")
        case .handOff: return .handOff
        }
        guard
            let (query, socket) = signIn(
                target, options, environment: environment, configuration: configuration, storageRecord: storageRecord)
        else { return .handOff }
        return .ask(query, socket: socket)
    }
}
