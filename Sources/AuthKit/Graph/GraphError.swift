/// Why a Microsoft Graph request failed. Graph's own messages are cleaned for the terminal.
public enum GraphError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The search text cannot be sent (empty, or too long).
    case invalidQuery(String)
    /// The request could not be sent or answered (network, TLS, timeout).
    case transport(HTTPError)
    /// Still 401 after one silent refresh of the access token.
    case unauthorized(message: String?)
    /// 403: the token lacks a permission (for user search: `User.ReadBasic.All`).
    case forbidden(missingPermission: String, message: String?)
    /// 429/503 beyond what authkit waits for.
    case throttled(retryAfterSeconds: Int?)
    /// Graph answered with an HTTP error and, when it gave them, its error code and message.
    case http(status: Int, code: String?, message: String?)
    /// The answer is not the JSON Graph documents.
    case malformedResponse(String)
    /// An `@odata.nextLink` pointing away from the Graph host (the token is never sent there).
    case foreignNextLink(String)
    /// No access token could be had for the request.
    case token(String)

    public var description: String {
        switch self {
        case .invalidQuery(let reason):
            return "invalid search: \(reason)"
        case .transport(let error):
            return "cannot reach Microsoft Graph: \(error)"
        case .unauthorized(let message):
            return "Microsoft Graph does not accept the sign-in" + (message.map { ": \($0)" } ?? "")
        case .forbidden(let permission, let message):
            return "Microsoft Graph refused the search: the sign-in lacks the \(permission) permission"
                + (message.map { " (\($0))" } ?? "")
        case .throttled(let seconds):
            return "Microsoft Graph is throttling requests" + (seconds.map { "; try again in \($0) s" } ?? "; try again later")
        case .http(let status, let code, let message):
            var text = "Microsoft Graph answered HTTP \(status)"
            if let code { text += " \(code)" }
            if let message { text += ": \(message)" }
            return text
        case .malformedResponse(let reason):
            return "Microsoft Graph's answer is malformed: \(reason)"
        case .foreignNextLink(let origin):
            return "Microsoft Graph's next page points to \(origin), not to Graph; paging stopped"
        case .token(let reason):
            return reason
        }
    }
}
