/// A configuration problem, naming where it is (file and line, variable or flag), the key,
/// and what is wrong. Secret values are never repeated.
public struct ConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// "~/.config/authkit/config:12", "environment variable AUTHKIT_CLIENT_ID", "--issuer".
    public var location: String
    public var key: String?
    public var problem: String

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
