#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One HTTP request, as a value. It has no textual description that could show its body:
/// bodies carry authorization codes, PKCE verifiers, refresh tokens and client secrets.
public struct HTTPRequest: Sendable {
    /// The methods authkit sends.
    public enum Method: String, Sendable {
        /// `GET`.
        case get = "GET"
        /// `POST`.
        case post = "POST"
    }

    /// The request method.
    public var method: Method
    /// Where the request goes.
    public var url: URL
    /// The request's header fields.
    public var headers: HTTPHeaders
    /// The request body (a form for the token endpoint), if any.
    public var body: [UInt8]?
    /// The whole exchange (connect, send, receive) must finish within this time.
    public var timeout: Duration
    /// Larger response bodies fail with ``HTTPError/responseTooLarge(host:limit:)``.
    public var maxResponseBytes: Int

    /// A request.
    /// - Parameters:
    ///   - method: `GET` or `POST`.
    ///   - url: Where it goes.
    ///   - headers: Its header fields.
    ///   - body: Its body, if any.
    ///   - timeout: The bound on the whole exchange.
    ///   - maxResponseBytes: The longest answer accepted.
    public init(
        method: Method = .get,
        url: URL,
        headers: HTTPHeaders = HTTPHeaders(),
        body: [UInt8]? = nil,
        timeout: Duration = .seconds(30),
        maxResponseBytes: Int = 1 << 20
    ) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout
        self.maxResponseBytes = maxResponseBytes
    }

    /// A form-encoded POST (`application/x-www-form-urlencoded`, RFC 6749 §4.1.3).
    public static func form(
        _ url: URL,
        fields: [(name: String, value: String)],
        headers: HTTPHeaders = HTTPHeaders(),
        timeout: Duration = .seconds(30),
        maxResponseBytes: Int = 1 << 20
    ) -> HTTPRequest {
        var headers = headers
        headers.replace("Content-Type", with: "application/x-www-form-urlencoded")
        if headers["Accept"] == nil { headers.replace("Accept", with: "application/json") }
        return HTTPRequest(
            method: .post, url: url, headers: headers,
            body: Array(FormEncoding.encode(fields).utf8),
            timeout: timeout, maxResponseBytes: maxResponseBytes)
    }

    /// "POST https://login.example.com/token" — safe to log: no query, no body.
    public var redactedSummary: String {
        "\(method.rawValue) \(url.redactedOrigin)\(url.path(percentEncoded: true))"
    }
}

extension URL {
    /// scheme://host[:port], without user info, path, query or fragment.
    /// Shown as written (percent-encoded), so a hostile `%1B` in a host is never decoded into
    /// a control character on the user's terminal.
    var redactedOrigin: String {
        let scheme = self.scheme ?? "?"
        var host = self.host(percentEncoded: true) ?? "?"
        if host.contains(":") && !host.hasPrefix("[") { host = "[\(host)]" }
        if let port = self.port { return "\(scheme)://\(host):\(port)" }
        return "\(scheme)://\(host)"
    }
}
