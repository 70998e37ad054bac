#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One HTTP request, as a value. It has no textual description that could show its body:
/// bodies carry authorization codes, PKCE verifiers, refresh tokens and client secrets.
public struct HTTPRequest: Sendable {
    public enum Method: String, Sendable {
        case get = "GET"
        case post = "POST"
    }

    public var method: Method
    public var url: URL
    public var headers: HTTPHeaders
    public var body: [UInt8]?
    /// The whole exchange (connect, send, receive) must finish within this time.
    public var timeout: Duration
    /// Larger response bodies fail with ``HTTPError/responseTooLarge(host:limit:)``.
    public var maxResponseBytes: Int

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
