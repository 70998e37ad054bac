/// A credential plug-in's command line, as every fast path that answers one takes it (authkit's
/// `CredentialFastPath` and the lean client's plans).
extension FastPathScanner {
    /// What ``plugIn(minTTL:takesAction:ownFlags:own:repeated:)`` found.
    package struct PlugInArguments: Equatable {
        package var options: FastPathOptions
        /// The action (`get` …), when one was given.
        package var action: String?
        /// The client's own options, one value each, by name.
        package var own: [String: String] = [:]
        /// The client's own options given more than once, by name.
        package var ownLists: [String: [String]] = [:]
        /// The client's own flags given.
        package var flags: Set<String> = []
    }

    /// The rest of the command line as a plug-in's: the shared options, at most one action
    /// (where the client `takesAction`), and the client's `ownFlags` (each once), `own` options
    /// (each once) and `repeated` options. Nil for anything else, which ArgumentParser is to parse.
    package mutating func plugIn(
        minTTL: Int, takesAction: Bool, ownFlags: Set<String> = [], own: Set<String> = [], repeated: Set<String> = []
    ) -> PlugInArguments? {
        var found = PlugInArguments(options: FastPathOptions(minTTL: minTTL))
        while index < arguments.count {
            let argument = arguments[index]
            if !argument.hasPrefix("-") {
                guard found.action == nil, takesAction else { return nil }
                found.action = argument
                index += 1
                continue
            }
            let name = Self.name(of: argument)
            switch shared(argument, into: &found.options) {
            case .handled: break
            case .malformed: return nil
            case .notShared where ownFlags.contains(argument):
                guard found.flags.insert(argument).inserted else { return nil }
            case .notShared where repeated.contains(name):
                guard let text = value(argument, name) else { return nil }
                found.ownLists[name, default: []].append(text)
            case .notShared:
                guard own.contains(name), found.own[name] == nil, let text = value(argument, name) else { return nil }
                found.own[name] = text
            }
            index += 1
        }
        return found
    }
}
