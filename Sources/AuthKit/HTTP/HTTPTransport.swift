/// Sends HTTP requests. ``CurlHTTPTransport`` is the real one; tests may provide others.
public protocol HTTPTransport: Sendable {
    /// Sends the request and returns the response, whatever its status. Throws only when no
    /// response arrived (or it was too large, or the task was cancelled).
    func send(_ request: HTTPRequest) async throws(HTTPError) -> HTTPResponse
}
