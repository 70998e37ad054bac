/// The configuration file: `$AUTHKIT_CONFIG`, else `$XDG_CONFIG_HOME/authkit/config`
/// (`~/.config/authkit/config`). An INI-style file (a subset of TOML):
///
/// ```
/// # comments start with #
/// [defaults]
/// profile = work
///
/// [profile work]                      # or [profile.work]
/// issuer = https://login.microsoftonline.com/{tenantid}/v2.0
/// tenant = organizations
/// client_id = "6731de76-14a6-49ae-97bc-6eba6914391e"
/// scopes = openid profile offline_access User.Read User.ReadBasic.All
/// group = com.example.shared
/// ```
///
/// Values may be bare (the rest of the line, trimmed; ` #` starts a comment) or double-quoted
/// with `\"` and `\\` escapes. Unknown sections and keys are errors, so a typo never goes
/// unnoticed.
package struct ConfigFile: Sendable, Equatable {
    package struct Entry: Sendable, Equatable {
        package var value: String
        package var line: Int

        package init(value: String, line: Int) {
            self.value = value
            self.line = line
        }
    }

    package struct Section: Sendable, Equatable {
        package var name: String
        package var line: Int
        package var entries: [String: Entry]

        package init(name: String, line: Int, entries: [String: Entry]) {
            self.name = name
            self.line = line
            self.entries = entries
        }
    }

    /// Where the file is (for messages), whether or not it exists.
    package var path: String
    package var defaults: Section?
    package var profiles: [String: Section]
    /// `[credential "https://dev.azure.com"]` sections: which sign-in `authkit credential git`
    /// (bare form) gives to which git host, by URL as written.
    package var credentials: [String: Section] = [:]
    /// `[registry "registry.example.com"]` sections: the same for docker registries.
    package var registries: [String: Section] = [:]
    /// `[group "com.example.shared"]` sections: the agent's rules for a group (``agentRules()``).
    package var groups: [String: Section] = [:]

    /// The two kinds of client mapping a file holds.
    package enum MappingKind: String, Sendable {
        /// `[credential "URL"]`: a git host.
        case credential
        /// `[registry "HOST"]`: a container registry.
        case registry
    }

    /// The mapping sections of one kind, by name.
    package func mappings(_ kind: MappingKind) -> [String: Section] {
        kind == .credential ? credentials : registries
    }
    /// Problems inside `[profile NAME]` sections (an unknown key, a line that is not
    /// `key = value`, a key set twice), by profile. Only a command that uses that profile fails
    /// on them; for every other command they are warnings (``ProfileResolver/warnings(using:)``),
    /// so a typo in one profile does not block the others.
    package var profileProblems: [String: [ConfigProblem]] = [:]

    /// A file of these sections (the mappings and group rules are set on their own).
    package init(path: String, defaults: Section?, profiles: [String: Section]) {
        self.path = path
        self.defaults = defaults
        self.profiles = profiles
    }

    /// Keys of `[credential "URL"]` and `[registry "HOST"]` sections.
    package static let credentialKeys: Set<String> = ["profile", "group", "account", "scopes", "resource", "username", "storage"]

    package static let profileKeys: Set<String> = [
        "issuer", "tenant", "client_id", "client_secret", "scopes", "group", "redirect_path", "redirect_host",
        "graph_url", "storage", "login_hint", "prompt", "domain_hint", "dpop", "redirect_port", "resources",
    ]
    package static let defaultsKeys: Set<String> = ["profile", "group", "storage"]

    /// Parses configuration text. `path` is used in error messages; `rules` judge a
    /// `[group "NAME"]` section's name and a mapping's `storage`, as the stores do.
    package static func parse(_ text: String, path: String, rules: StoreRules) throws(ConfigProblem) -> ConfigFile {
        var defaults: Section?
        var profiles: [String: Section] = [:]
        var credentials: [String: Section] = [:]
        var registries: [String: Section] = [:]
        var groups: [String: Section] = [:]
        var current: (kind: String, name: String)?
        var lineNumber = 0
        var profileProblems: [String: [ConfigProblem]] = [:]
        for rawLine in text.textLines() {
            lineNumber += 1
            let where_ = "\(path):\(lineNumber)"
            let line = rawLine.trimmingASCIIWhitespace()
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
            if line.hasPrefix("[") {
                // The first `]` outside quotes: `[credential "https://[::1]:8443"]` is one header.
                var quoted = false
                let close = line.indices.first { index in
                    if line[index] == "\"" { quoted.toggle() }
                    return line[index] == "]" && !quoted
                }
                guard let close else {
                    throw ConfigProblem(location: where_, problem: "a section header must end with ]")
                }
                let rest = line[line.index(after: close)...].trimmingASCIIWhitespace()
                guard rest.isEmpty || rest.hasPrefix("#") else {
                    throw ConfigProblem(location: where_, problem: "unexpected text after the section header")
                }
                let header = line[line.index(after: line.startIndex)..<close].trimmingASCIIWhitespace()
                if header == "defaults" {
                    guard defaults == nil else { throw ConfigProblem(location: where_, problem: "[defaults] appears twice") }
                    defaults = Section(name: "defaults", line: lineNumber, entries: [:])
                    current = ("defaults", "defaults")
                } else if let name = profileName(header) {
                    guard ProfileName.isValid(name) else {
                        throw ConfigProblem(
                            location: where_, problem: "‘\(name)’ is not a valid profile name (letters, digits, . _ -)")
                    }
                    guard profiles[name] == nil else {
                        throw ConfigProblem(location: where_, problem: "[profile \(name)] appears twice")
                    }
                    profiles[name] = Section(name: name, line: lineNumber, entries: [:])
                    current = ("profile", name)
                } else if let (name, problem) = Self.groupSection(header, problem: rules.groupProblem) {
                    if let problem { throw ConfigProblem(location: where_, problem: problem) }
                    guard groups[name] == nil else {
                        throw ConfigProblem(location: where_, problem: "[group \"\(name)\"] appears twice")
                    }
                    groups[name] = Section(name: name, line: lineNumber, entries: [:])
                    current = ("group", name)
                } else if let (kind, name) = Self.quotedSection(header), kind == "credential" || kind == "registry" {
                    guard !name.isEmpty, !name.unicodeScalars.contains(where: { $0.value < 0x21 || $0.value == 0x7F }) else {
                        throw ConfigProblem(
                            location: where_,
                            problem: "[\(kind) \"…\"] needs a \(kind == "credential" ? "URL" : "registry host") without spaces")
                    }
                    let existing = kind == "credential" ? credentials[name] : registries[name]
                    guard existing == nil else {
                        throw ConfigProblem(location: where_, problem: "[\(kind) \"\(name)\"] appears twice")
                    }
                    let section = Section(name: name, line: lineNumber, entries: [:])
                    if kind == "credential" { credentials[name] = section } else { registries[name] = section }
                    current = (kind, name)
                } else {
                    throw ConfigProblem(
                        location: where_,
                        problem:
                            "unknown section [\(header)]; use [defaults], [profile NAME], [credential \"URL\"], [registry \"HOST\"] or [group \"NAME\"]"
                    )
                }
                continue
            }
            let key: String, value: String
            do throws(ConfigProblem) {
                (key, value) = try keyAndValue(line, location: where_, section: current, stores: rules.stores)
            } catch {
                // Inside a profile: that profile's problem (an error only where it is used).
                guard let section = current, section.kind == "profile" else { throw error }
                profileProblems[section.name, default: []].append(error)
                continue
            }
            guard let section = current else { continue }
            let entry = Entry(value: value, line: lineNumber)
            if section.kind == "defaults" {
                guard defaults?.entries[key] == nil else { throw ConfigProblem(location: where_, key: key, problem: "set twice") }
                defaults?.entries[key] = entry
            } else if section.kind == "group" {
                guard groups[section.name]?.entries[key] == nil else {
                    throw ConfigProblem(location: where_, key: key, problem: "set twice")
                }
                groups[section.name]?.entries[key] = entry
            } else if section.kind == "credential" || section.kind == "registry" {
                let existing =
                    section.kind == "credential" ? credentials[section.name]?.entries[key] : registries[section.name]?.entries[key]
                guard existing == nil else { throw ConfigProblem(location: where_, key: key, problem: "set twice") }
                if section.kind == "credential" {
                    credentials[section.name]?.entries[key] = entry
                } else {
                    registries[section.name]?.entries[key] = entry
                }
            } else {
                guard profiles[section.name]?.entries[key] == nil else {
                    profileProblems[section.name, default: []].append(ConfigProblem(location: where_, key: key, problem: "set twice"))
                    continue
                }
                profiles[section.name]?.entries[key] = entry
            }
        }
        var file = ConfigFile(path: path, defaults: defaults, profiles: profiles)
        file.credentials = credentials
        file.registries = registries
        file.groups = groups
        try file.checkGroupRules()
        file.profileProblems = profileProblems
        return file
    }

    /// `credential "https://dev.azure.com"` → ("credential", "https://dev.azure.com").
    static func quotedSection(_ header: String) -> (String, String)? {
        guard let space = header.firstIndex(of: " ") else { return nil }
        let kind = String(header[..<space])
        var name = header[header.index(after: space)...].trimmingASCIIWhitespace()
        guard name.count >= 2, name.hasPrefix("\""), name.hasSuffix("\"") else { return nil }
        name = String(name.dropFirst().dropLast())
        return (kind, name)
    }

    private static func profileName(_ header: String) -> String? {
        if header.hasPrefix("profile.") { return String(header.dropFirst("profile.".count)) }
        if header.hasPrefix("profile ") {
            var name = header.dropFirst("profile ".count).trimmingASCIIWhitespace()
            if name.count >= 2, name.hasPrefix("\""), name.hasSuffix("\"") { name = String(name.dropFirst().dropLast()) }
            return name
        }
        return nil
    }

    static func parseValue(_ raw: Substring, location: String, key: String) throws(ConfigProblem) -> String {
        let text = raw.trimmingASCIIWhitespace()
        guard text.hasPrefix("\"") else {
            // A bare value ends at " #" (a comment).
            var value = text
            // The first " #", else the first "\t#", by characters (by hand: `firstRange(of:)`
            // is the regex engine's, which Embedded Swift has not).
            func first(_ space: Character) -> String.Index? {
                var previous: String.Index?
                for index in value.indices {
                    if let previous, value[previous] == space, value[index] == "#" { return previous }
                    previous = index
                }
                return nil
            }
            if let hash = first(" ") ?? first("\t") { value = String(value[..<hash]) }
            return value.trimmingASCIIWhitespace()
        }
        var value = ""
        var escaped = false
        var closed: String.Index?
        var index = text.index(after: text.startIndex)
        while index < text.endIndex {
            let character = text[index]
            if escaped {
                switch character {
                case "\"", "\\": value.append(character)
                case "n": value.append("\n")
                case "t": value.append("\t")
                default: throw ConfigProblem(location: location, key: key, problem: "unknown escape \\\(character)")
                }
                escaped = false
            } else if character == "\\" {
                escaped = true
            } else if character == "\"" {
                closed = index
                break
            } else {
                value.append(character)
            }
            index = text.index(after: index)
        }
        guard let closed else { throw ConfigProblem(location: location, key: key, problem: "the quoted value is not closed") }
        let rest = text[text.index(after: closed)...].trimmingASCIIWhitespace()
        guard rest.isEmpty || rest.hasPrefix("#") else {
            throw ConfigProblem(location: location, key: key, problem: "unexpected text after the quoted value")
        }
        return value
    }

    /// One edit apart (a typo): same length with one substitution, or one insertion/deletion.
    package static func similar(_ a: String, _ b: String) -> Bool {
        let x = Array(a), y = Array(b)
        if x == y || abs(x.count - y.count) > 1 { return false }
        // Optimal string alignment distance: an insertion, deletion, substitution or a swap of
        // two neighbours ("stauts" for "status") is one edit.
        var previous2 = [Int](repeating: 0, count: y.count + 1)
        var previous = Array(0...y.count)
        for i in 1...max(x.count, 1) where !x.isEmpty {
            var current = [Int](repeating: 0, count: y.count + 1)
            current[0] = i
            for j in stride(from: 1, through: y.count, by: 1) {
                let cost = x[i - 1] == y[j - 1] ? 0 : 1
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                if i > 1, j > 1, x[i - 1] == y[j - 2], x[i - 2] == y[j - 1] {
                    current[j] = min(current[j], previous2[j - 2] + 1)
                }
            }
            (previous2, previous) = (previous, current)
        }
        return (x.isEmpty ? y.count : previous[y.count]) <= 1
    }
}
