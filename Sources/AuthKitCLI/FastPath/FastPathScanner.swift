import AuthKit

/// The options `token` and the credential plug-ins share, as their fast paths parse them.
struct SharedFastPathOptions: Equatable {
    var selector = SignInSelector()
    var scopes: [String] = []
    var resources: [String] = []
    var minTTL: Int
}

/// One scanner for ``TokenFastPath`` and ``CredentialFastPath``: the same rules for `--name
/// value` and `--name=value`, and the same refusals (a repeated option, a value that looks
/// like a flag, a number out of range), so both fast paths decline exactly what ArgumentParser
/// would reject and leave it to ArgumentParser to say so.
struct FastPathScanner {
    let arguments: [String]
    var index: Int

    enum Outcome {
        /// A shared option, taken into the options.
        case handled
        /// Not one of the shared options: the caller's own, or unknown.
        case notShared
        /// A shared option with a missing, repeated or malformed value: decline the fast path.
        case malformed
    }

    /// The option's value, from `--name=value` or the next argument (which must not be a flag).
    mutating func value(_ argument: String, _ name: String) -> String? {
        if argument.hasPrefix(name + "=") { return String(argument.dropFirst(name.count + 1)) }
        guard argument == name, index + 1 < arguments.count else { return nil }
        index += 1
        let next = arguments[index]
        return next.hasPrefix("-") ? nil : next
    }

    /// The option name of `argument` (`--group=x` → `--group`).
    static func name(of argument: String) -> String {
        argument.split(separator: "=", maxSplits: 1).first.map(String.init) ?? argument
    }

    /// The sign-in's options that take a word, by the name ArgumentParser declares.
    private static func selectorWord(_ name: String) -> WritableKeyPath<SignInSelector, String?>? {
        switch name {
        case "--" + OptionName.profile: return \.profile
        case "--" + OptionName.group: return \.group
        case "--" + OptionName.account: return \.account
        default: return nil
        }
    }

    mutating func shared(_ argument: String, into options: inout SharedFastPathOptions) -> Outcome {
        let name = Self.name(of: argument)
        if let keyPath = Self.selectorWord(name) {
            guard let text = value(argument, name), options.selector[keyPath: keyPath] == nil else { return .malformed }
            options.selector[keyPath: keyPath] = text
            return .handled
        }
        switch name {
        case "--" + OptionName.scope:
            guard let text = value(argument, name) else { return .malformed }
            options.scopes.append(text)
        case "--" + OptionName.resource:
            guard let text = value(argument, name), AgentTokenRequest.isResource(text) else { return .malformed }
            options.resources.append(text)
        case "--" + OptionName.minTTL:
            guard let text = value(argument, name), let seconds = Int(text), TokenRequest.minTTLRange.contains(seconds) else {
                return .malformed
            }
            options.minTTL = seconds
        case "--" + OptionName.insecureStorage:
            guard argument == name, !options.selector.insecureStorage,
                options.selector.storage == nil || options.selector.storage == .plainFile
            else { return .malformed }
            options.selector.insecureStorage = true
        case "--" + OptionName.storage:
            guard let text = value(argument, name), options.selector.storage == nil, let choice = StorageChoice(rawValue: text),
                !options.selector.insecureStorage || choice == .plainFile
            else { return .malformed }
            options.selector.storage = choice
        default:
            return .notShared
        }
        return .handled
    }
}
