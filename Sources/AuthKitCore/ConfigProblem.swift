/// A problem the configuration file's parser found, naming where it is (file and line), the
/// key, and what is wrong; authkit reports it as its public `ConfigurationError`. Secret values
/// are never repeated.
package struct ConfigProblem: Error, Sendable, Equatable, CustomStringConvertible {
    /// "~/.config/authkit/config:12".
    package var location: String
    /// The setting's key (`issuer`, `client_id` …), when one setting is at fault.
    package var key: String?
    /// What is wrong and, where it helps, how to fix it.
    package var problem: String

    package init(location: String, key: String? = nil, problem: String) {
        self.location = location
        self.key = key
        self.problem = problem
    }

    package var description: String {
        if let key { return "\(location): ‘\(key)’: \(problem)" }
        return "\(location): \(problem)"
    }
}
