#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One HTTP request, as a value. Its textual description (and `dump`'s) shows no header
/// value, query or body: they carry authorization codes, PKCE verifiers, tokens and client
/// secrets.
public struct HTTPRequest: Sendable {
    /// A request method (RFC 9110 §9): `GET`, `POST`, or any other token (`PUT`, `PATCH`,
    /// `DELETE` …).
    public struct Method: RawRepresentable, Sendable, Hashable {
        /// The method as sent, e.g. `GET`.
        public let rawValue: String

        /// The method named `rawValue`, or nil when it is not an RFC 9110 token (letters,
        /// digits and the symbols RFC 9110 §5.6.2 allows in a `tchar`; at most 32 characters).
        public init?(rawValue: String) {
            guard !rawValue.isEmpty, rawValue.utf8.count <= 32,
                rawValue.utf8.allSatisfy({
                    $0 < 0x80
                        && (Self.tokenCharacters.contains($0) || (0x30...0x39).contains($0) || (0x41...0x5A).contains($0)
                            || (0x61...0x7A).contains($0))
                })
            else { return nil }
            self.rawValue = rawValue
        }

        private static let tokenCharacters = Set("!#$%&'*+-.^_`|~".utf8)

        /// `GET`.
        public static let get = Method(known: "GET")
        /// `POST`.
        public static let post = Method(known: "POST")

        private init(known: String) { rawValue = known }
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
    ///   - method: `GET`, `POST` or another method.
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

extension HTTPRequest: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// ``redactedSummary``, the header names and the body's size: never a header value, the
    /// query or the body, which carry codes, verifiers, tokens and client secrets.
    public var description: String { "\(redactedSummary) \(headers) \(body?.count ?? 0) bytes" }
    /// The same as ``description``.
    public var debugDescription: String { description }
    /// What ``description`` shows, as `dump` shows it.
    public var customMirror: Mirror {
        Mirror(self, children: ["summary": redactedSummary, "headers": headers, "bodyBytes": body?.count ?? 0])
    }
}
