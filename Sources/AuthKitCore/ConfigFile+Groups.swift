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
    /// The values `confirm` takes (the agent's `AgentGroupRule.Confirm`).
    package static let confirmValues = ["always", "once", "never"]

    /// A group section's settings, checked: nil where the section leaves the default.
    package struct GroupRuleSettings: Equatable {
        package var confirm: String?
        /// Seconds.
        package var confirmFor: Double?
        package var allow: [String]?
    }

    /// `group "com.example.prod"` → the group's name, and a problem when it is not a valid
    /// group (`problem`: the stores' judgement of a name).
    static func groupSection(_ header: String, problem: (String) -> String?) -> (String, String?)? {
        guard header.hasPrefix("group "), let (kind, name) = quotedSection(header), kind == "group" else { return nil }
        return (name, problem(name).map { "[group \"\(name)\"]: \($0)" })
    }

    /// Refuses a section whose values are not rules, naming the line.
    func checkGroupRules() throws(ConfigProblem) {
        for section in groups.values { _ = try Self.groupRule(section, path: path) }
    }

    /// The settings of one `[group "NAME"]` section.
    package static func groupRule(_ section: Section, path: String = "") throws(ConfigProblem) -> GroupRuleSettings {
        var rule = GroupRuleSettings()
        if let entry = section.entries["confirm"] {
            guard confirmValues.contains(entry.value) else {
                throw ConfigProblem(
                    location: "\(path):\(entry.line)", key: "confirm", problem: "‘\(entry.value)’: use always, once or never")
            }
            rule.confirm = entry.value
        }
        if let entry = section.entries["confirm_for"] {
            guard let seconds = duration(entry.value), seconds > 0, seconds <= 86_400 else {
                throw ConfigProblem(
                    location: "\(path):\(entry.line)", key: "confirm_for",
                    problem: "‘\(entry.value)’: a duration up to a day, such as 90s, 10m or 8h")
            }
            rule.confirmFor = seconds
        }
        if let entry = section.entries["allow"] {
            let programs = entry.value.split(separator: " ").map(String.init)
            guard !programs.isEmpty, programs.allSatisfy({ $0.hasPrefix("/") || !$0.contains("/") }) else {
                throw ConfigProblem(
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
