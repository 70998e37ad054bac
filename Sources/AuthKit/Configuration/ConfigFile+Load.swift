import AuthKitCore
import SecretStore

/// The configuration file (``ConfigFile``, AuthKitCore's parser and reader) as authkit reads
/// it: where it is, the stores' rule for group names, the agent's group rules.
extension ConfigFile {
    /// The file's location for this environment.
    package static func location(environment: [String: String]) -> String {
        UserFiles.configPath(environment: environment) { UserHome.path(home: environment["HOME"]) }
    }

    /// Reads and parses the file; a missing file is an empty configuration (unless
    /// `AUTHKIT_CONFIG` names it explicitly).
    package static func load(environment: [String: String]) throws(ConfigurationError) -> ConfigFile {
        do throws(ConfigProblem) {
            return try load(path: location(environment: environment), environment: environment, rules: storeRules)
        } catch {
            throw ConfigurationError(error)
        }
    }

    /// What the stores say of the file's names: `SecretGroup`'s rule, every store `StoreKinds`
    /// knows (also those added at run time).
    static var storeRules: StoreRules {
        StoreRules(
            groupProblem: { name in
                do throws(SecretStoreError) {
                    _ = try SecretGroup(name)
                    return nil
                } catch {
                    return error.description
                }
            }, stores: StorageChoice.allCases.map(\.rawValue))
    }

    /// Parses configuration text. `path` is used in error messages.
    package static func parse(_ text: String, path: String) throws(ConfigurationError) -> ConfigFile {
        do throws(ConfigProblem) {
            return try parse(text, path: path, rules: storeRules)
        } catch {
            throw ConfigurationError(error)
        }
    }

    /// The agent's rules for every group that has a section.
    package func agentRules() -> [String: AgentGroupRule] {
        groups.compactMapValues { try? Self.rule($0) }
    }

    static func rule(_ section: Section, path: String = "") throws(ConfigurationError) -> AgentGroupRule {
        let settings: GroupRuleSettings
        do throws(ConfigProblem) { settings = try groupRule(section, path: path) } catch { throw ConfigurationError(error) }
        var rule = AgentGroupRule()
        if let confirm = settings.confirm.flatMap(AgentGroupRule.Confirm.init(rawValue:)) { rule.confirm = confirm }
        if let seconds = settings.confirmFor { rule.confirmFor = seconds }
        rule.allow = settings.allow
        return rule
    }
}
