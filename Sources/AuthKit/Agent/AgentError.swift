/// A failure the authkit agent reported instead of a token, or a refusal of the socket
/// (a forwarded socket that does not serve the group asked for).
public struct AgentError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, in one clause.
    public let summary: String
    /// What the user can do about it.
    public let hint: String?
    /// How a program should treat it (the same as the original error's).
    public let category: AuthKitError.Category

    /// The summary (the agent keeps no longer text).
    public var description: String { summary }

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
            self.init(code: "not_signed_in", message: error.summary, category: "login", group: group, account: account)
        case .loginRequired(let account, let reason):
            self.init(code: "login_required", message: reason, category: "login", account: account)
        default:
            self.init(code: "failed", message: error.summary, hint: error.hint, category: Self.name(error.category))
        }
    }

    /// The error the caller would have met reading the store itself.
    func error(group: String) -> AuthKitError {
        switch code {
        case "not_signed_in": return .notSignedIn(group: self.group ?? group, account: account)
        case "login_required": return .loginRequired(account: account ?? "?", reason: message)
        default: return .agent(AgentError(summary: message, hint: hint, category: Self.category(category)))
        }
    }

    static func name(_ category: AuthKitError.Category) -> String {
        switch category {
        case .usage: return "usage"
        case .loginNeeded: return "login"
        case .storage: return "storage"
        case .provider: return "provider"
        case .configurationRejected: return "configuration"
        }
    }

    static func category(_ name: String) -> AuthKitError.Category {
        switch name {
        case "login": return .loginNeeded
        case "storage": return .storage
        case "provider": return .provider
        case "configuration": return .configurationRejected
        default: return .usage
        }
    }
}
