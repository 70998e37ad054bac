/// One `key = value` line of a section, as the parser reads it.
extension ConfigFile {
    /// Every key some section takes.
    static let everyKey = defaultsKeys.union(profileKeys).union(groupKeys).union(credentialKeys)

    /// One `key = value` line of `section`, checked against the keys that section allows.
    static func keyAndValue(
        _ line: String, location: String, section: (kind: String, name: String)?, stores: [String]
    ) throws(ConfigProblem) -> (String, String) {
        guard let equals = line.firstIndex(of: "=") else {
            throw ConfigProblem(location: location, problem: "expected key = value")
        }
        let key = line[..<equals].trimmingASCIIWhitespace()
        // A key is named in an error only when it is a known one or a known one misspelt: a
        // secret pasted on a line of its own (base64, `==` at its end) or typed
        // `client_secret: …` would otherwise be echoed in a warning every command prints.
        func isLetter(_ byte: UInt8) -> Bool { (0x61...0x7A).contains(byte) || (0x41...0x5A).contains(byte) }
        guard let first = key.utf8.first, isLetter(first), key.utf8.count <= 32,
            key.utf8.allSatisfy({ isLetter($0) || (0x30...0x39).contains($0) || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-") })
        else {
            throw ConfigProblem(location: location, problem: "this line is not key = value (a key is letters, digits, _ and -)")
        }
        // (Worked out only for an error: every command reads the file.)
        func known(in keys: Set<String>) -> String? {
            let spelled = String(key.lowercased().map { $0 == "-" ? "_" : $0 })
            return keys.sorted().first { $0 == spelled || Self.similar($0, spelled) }
        }
        func shown() -> String? { everyKey.contains(key) || known(in: everyKey) != nil ? key : nil }
        let value = try parseValue(
            line[line.index(after: equals)...], location: location,
            key: everyKey.contains(key) ? key : shown() ?? "(a key not repeated here)")
        guard let section else {
            throw ConfigProblem(
                location: location, key: shown(), problem: "a key outside any section; start with [defaults] or [profile NAME]")
        }
        let allowed =
            section.kind == "defaults"
            ? defaultsKeys : section.kind == "profile" ? profileKeys : section.kind == "group" ? groupKeys : credentialKeys
        guard allowed.contains(key) else {
            let list = allowed.sorted().joined(separator: ", ")
            guard let meant = known(in: allowed), let shown = shown() else {
                throw ConfigProblem(location: location, problem: "an unknown key (not repeated here); known keys: \(list)")
            }
            throw ConfigProblem(location: location, key: shown, problem: "unknown key (did you mean \(meant)?); known keys: \(list)")
        }
        if key == "storage", allowed == credentialKeys, !stores.contains(value) {
            let known = stores.joined(separator: ", ")
            throw ConfigProblem(location: location, key: key, problem: "‘\(value)’ is not a store; use one of \(known)")
        }
        if key == "username", value.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
            throw ConfigProblem(location: location, key: key, problem: "a user name is one line without control characters")
        }
        return (key, value)
    }
}
