import AuthKitCore

/// A configuration problem, naming where it is (file and line, variable or flag), the key,
/// and what is wrong. Secret values are never repeated.
public struct ConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// "~/.config/authkit/config:12", "environment variable AUTHKIT_CLIENT_ID", "--issuer".
    public var location: String
    /// The setting's key (`issuer`, `client_id` …), when one setting is at fault.
    public var key: String?
    /// What is wrong and, where it helps, how to fix it.
    public var problem: String

    /// A problem with the setting `key` found at `location`.
    public init(location: String, key: String? = nil, problem: String) {
        self.location = location
        self.key = key
        self.problem = problem
    }

    public var description: String {
        if let key { return "\(location): ‘\(key)’: \(problem)" }
        return "\(location): \(problem)"
    }
}

extension ConfigurationError {
    /// The parser's problem (AuthKitCore's ``ConfigProblem``) as the public error.
    package init(_ problem: ConfigProblem) {
        self.init(location: problem.location, key: problem.key, problem: problem.problem)
    }
}
