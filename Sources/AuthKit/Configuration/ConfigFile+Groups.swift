import SecretStore

/// `[group "NAME"]` sections: what the agent does before it hands out a token of the group.
///
/// ```ini
/// [group "com.example.prod"]
/// confirm = once          # always | once | never (default)
/// confirm_for = 10m       # how long a `once` yes lasts (s, m, h; default 10m)
/// allow = git kubectl /usr/bin/curl
/// ```
extension ConfigFile {
    package static let groupKeys: Set<String> = ["confirm", "confirm_for", "allow"]

    /// `group "com.example.prod"` → the group's name, and a problem when it is not a valid group.
    static func groupSection(_ header: String) -> (String, String?)? {
        guard header.hasPrefix("group "), let (kind, name) = quotedSection(header), kind == "group" else { return nil }
        do {
            _ = try SecretGroup(name)
            return (name, nil)
        } catch {
            return (name, "[group \"\(name)\"]: \(error)")
        }
    }

    /// The agent's rules for every group that has a section.
    package func agentRules() -> [String: AgentGroupRule] {
        groups.compactMapValues { try? Self.rule($0) }
    }

    /// Refuses a section whose values are not rules, naming the line.
    func checkGroupRules() throws(ConfigurationError) {
        for section in groups.values { _ = try Self.rule(section, path: path) }
    }

    static func rule(_ section: Section, path: String = "") throws(ConfigurationError) -> AgentGroupRule {
        var rule = AgentGroupRule()
        if let entry = section.entries["confirm"] {
            guard let confirm = AgentGroupRule.Confirm(rawValue: entry.value) else {
                throw ConfigurationError(
                    location: "\(path):\(entry.line)", key: "confirm", problem: "‘\(entry.value)’: use always, once or never")
            }
            rule.confirm = confirm
        }
        if let entry = section.entries["confirm_for"] {
            guard let seconds = duration(entry.value), seconds > 0, seconds <= 86_400 else {
                throw ConfigurationError(
                    location: "\(path):\(entry.line)", key: "confirm_for",
                    problem: "‘\(entry.value)’: a duration up to a day, such as 90s, 10m or 8h")
            }
            rule.confirmFor = seconds
        }
        if let entry = section.entries["allow"] {
            let programs = entry.value.split(separator: " ").map(String.init)
            guard !programs.isEmpty, programs.allSatisfy({ $0.hasPrefix("/") || !$0.contains("/") }) else {
                throw ConfigurationError(
                    location: "\(path):\(entry.line)", key: "allow",
                    problem: "name programs (git) or give absolute paths (/usr/bin/curl), separated by spaces")
            }
            rule.allow = programs
        }
        return rule
    }

    /// `90`, `90s`, `10m`, `8h` → seconds.
    static func duration(_ text: String) -> Double? {
        let units: [Character: Double] = ["s": 1, "m": 60, "h": 3600]
        if let last = text.last, let unit = units[last], let number = Double(text.dropLast()) { return number * unit }
        return Double(text)
    }
}
