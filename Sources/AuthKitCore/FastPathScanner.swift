/// One scanner for every fast path (`authkit token`, the credential plug-ins, the lean
/// client): the same rules for `--name value` and `--name=value`, and the same refusals (a
/// repeated option, a value that looks like a flag, a number out of range), so a fast path
/// declines exactly what ArgumentParser would reject and leaves it to ArgumentParser to say so.
package struct FastPathScanner {
    package let arguments: [String]
    package var index: Int
    /// Whether a `--storage` value names a store: ``StoreNames/all`` unless the program knows
    /// more stores (authkit asks its store kinds, to which an embedding tool may add).
    package var isStore: (String) -> Bool

    package init(arguments: [String], index: Int, isStore: @escaping (String) -> Bool = { StoreNames.all.contains($0) }) {
        self.arguments = arguments
        self.index = index
        self.isStore = isStore
    }

    package enum Outcome {
        /// A shared option, taken into the options.
        case handled
        /// Not one of the shared options: the caller's own, or unknown.
        case notShared
        /// A shared option with a missing, repeated or malformed value: decline the fast path.
        case malformed
    }

    /// The option's value, from `--name=value` or the next argument (which must not be a flag).
    package mutating func value(_ argument: String, _ name: String) -> String? {
        if argument.hasPrefix(name + "=") { return String(argument.dropFirst(name.count + 1)) }
        guard argument == name, index + 1 < arguments.count else { return nil }
        index += 1
        let next = arguments[index]
        return next.hasPrefix("-") ? nil : next
    }

    /// The option name of `argument` (`--group=x` → `--group`).
    package static func name(of argument: String) -> String {
        argument.split(separator: "=", maxSplits: 1).first.map(String.init) ?? argument
    }

    /// Takes `argument` (and its value) into `options` when it is one of the shared options.
    package mutating func shared(_ argument: String, into options: inout FastPathOptions) -> Outcome {
        let name = Self.name(of: argument)
        switch name {
        case "--" + OptionName.profile: return word(argument, name, &options.profile)
        case "--" + OptionName.group: return word(argument, name, &options.group)
        case "--" + OptionName.account: return word(argument, name, &options.account)
        case "--" + OptionName.scope:
            guard let text = value(argument, name) else { return .malformed }
            options.scopes.append(text)
        case "--" + OptionName.resource:
            guard let text = value(argument, name), TokenText.isResource(text) else { return .malformed }
            options.resources.append(text)
        case "--" + OptionName.minTTL:
            guard let text = value(argument, name), let seconds = Int(text), FastPathOptions.minTTLRange.contains(seconds) else {
                return .malformed
            }
            options.minTTL = seconds
        case "--" + OptionName.insecureStorage:
            guard argument == name, !options.insecureStorage, options.storage == nil || options.storage == StoreNames.plainFile else {
                return .malformed
            }
            options.insecureStorage = true
        case "--" + OptionName.storage:
            guard let text = value(argument, name), options.storage == nil, isStore(text),
                !options.insecureStorage || text == StoreNames.plainFile
            else { return .malformed }
            options.storage = text
        default:
            return .notShared
        }
        return .handled
    }

    /// A sign-in option that takes one word, given once.
    private mutating func word(_ argument: String, _ name: String, _ slot: inout String?) -> Outcome {
        guard let text = value(argument, name), slot == nil else { return .malformed }
        slot = text
        return .handled
    }
}
