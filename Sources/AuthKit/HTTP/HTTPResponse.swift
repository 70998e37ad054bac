/// A received HTTP response (any status).
public struct HTTPResponse: Sendable {
    /// The HTTP status code.
    public var status: Int
    /// The response's header fields.
    public var headers: HTTPHeaders
    /// The response body.
    public var body: [UInt8]

    /// A response (transports and tests build them).
    public init(status: Int, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The media type of the body, lowercased, without parameters ("application/json").
    public var mediaType: String? {
        guard let value = headers["Content-Type"] else { return nil }
        let type = value.split(separator: ";", maxSplits: 1).first.map(String.init) ?? value
        return type.trimmingASCIIWhitespace().lowercased()
    }
}

extension HTTPResponse: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The status, the header names and the body's size: never a header value or the body,
    /// which carry tokens (a token endpoint's answer).
    public var description: String { "HTTP \(status) \(headers) \(body.count) bytes" }
    /// The same as ``description``.
    public var debugDescription: String { description }
    /// What ``description`` shows, as `dump` shows it.
    public var customMirror: Mirror { Mirror(self, children: ["status": status, "headers": headers, "bodyBytes": body.count]) }
}
