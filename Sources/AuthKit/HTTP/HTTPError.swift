/// Why an HTTP exchange produced no usable response. Messages name the host, never a body,
/// header value or query string.
public enum HTTPError: Error, Sendable, Equatable, CustomStringConvertible {
    /// libcurl could not be loaded.
    case libraryUnavailable(String)
    /// The URL is not an http(s) URL libcurl accepts.
    case invalidURL(String)
    /// The host name could not be resolved.
    case cannotResolve(host: String, detail: String)
    /// No connection could be made.
    case cannotConnect(host: String, detail: String)
    /// No complete answer within the request's timeout.
    case timedOut(host: String, seconds: Int)
    /// The TLS handshake or certificate check failed.
    case tls(host: String, detail: String)
    /// The answer was longer than the request allows.
    case responseTooLarge(host: String, limit: Int)
    /// The connection broke after the request may have reached the server.
    case connectionLost(host: String, detail: String)
    /// The task was cancelled.
    case cancelled
    /// Any other transport failure, with libcurl's words.
    case other(host: String, detail: String)

    /// True when the request certainly never reached the server, so sending it again cannot
    /// redeem a code or rotate a refresh token twice.
    public var isSafeToRetry: Bool {
        switch self {
        case .cannotResolve, .cannotConnect: return true
        default: return false
        }
    }

    public var description: String {
        switch self {
        case .libraryUnavailable(let detail):
            return "HTTP is unavailable: \(detail)"
        case .invalidURL(let detail):
            return "invalid URL: \(detail)"
        case .cannotResolve(let host, let detail):
            return "cannot resolve \(host): \(detail)"
        case .cannotConnect(let host, let detail):
            return "cannot connect to \(host): \(detail)"
        case .timedOut(let host, let seconds):
            return "\(host) did not answer within \(seconds) s"
        case .tls(let host, let detail):
            return "TLS with \(host) failed: \(detail)"
        case .responseTooLarge(let host, let limit):
            return "\(host) sent more than \(limit) bytes"
        case .connectionLost(let host, let detail):
            return "connection to \(host) broke: \(detail)"
        case .cancelled:
            return "the request was cancelled"
        case .other(let host, let detail):
            return "HTTP request to \(host) failed: \(detail)"
        }
    }
}
