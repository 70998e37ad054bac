/// A failure the authkit agent reported instead of a token, or a refusal of the socket
/// (a forwarded socket that does not serve the group asked for).
public struct AgentError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, in one clause.
    public let summary: String
    /// What the user can do about it.
    public let hint: String?
    /// How a program should treat it (the same as the original error's).
    public let category: AuthKitError.Category

    /// The summary and, when there is one, the hint — the whole message, as a store's error
    /// gives it (a plug-in served through the agent prints this one line).
    public var description: String { hint.map { "\(summary); \($0)" } ?? summary }

    init(summary: String, hint: String?, category: AuthKitError.Category) {
        self.summary = summary
        self.hint = hint
        self.category = category
    }
}

extension AgentFailure {
    /// The failure an error becomes on the wire.
    init(_ error: AuthKitError) {
        switch error {
        case .notSignedIn(let group, let account):
            self.init(code: .notSignedIn, message: error.summary, category: .login, group: group, account: account)
        case .loginRequired(let account, let reason):
            self.init(code: .loginRequired, message: reason, category: .login, account: account)
        default:
            self.init(code: .failed, message: error.summary, hint: error.hint, category: Category(error.category))
        }
    }

    /// The error the caller would have met reading the store itself.
    func error(group: String) -> AuthKitError {
        switch code {
        case .notSignedIn: return .notSignedIn(group: self.group ?? group, account: account)
        case .loginRequired: return .loginRequired(account: account ?? "?", reason: message)
        case .refused: return .agent(AgentError(summary: message, hint: hint, category: .refused))
        case .notOpen, .badRequest, .failed: return .agent(AgentError(summary: message, hint: hint, category: category.kind))
        }
    }
}

extension AgentFailure.Category {
    init(_ category: AuthKitError.Category) {
        switch category {
        case .usage: self = .usage
        case .loginNeeded: self = .login
        case .storage: self = .storage
        case .provider: self = .provider
        case .configurationRejected: self = .configuration
        // Said by the code (`refused`) on the wire; its category stays one every client reads.
        case .refused: self = .usage
        }
    }

    /// The category of the error the caller meets.
    var kind: AuthKitError.Category {
        switch self {
        case .usage: return .usage
        case .login: return .loginNeeded
        case .storage: return .storage
        case .provider: return .provider
        case .configuration: return .configurationRejected
        }
    }
}
