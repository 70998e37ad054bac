#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A minimal Microsoft Graph client: user search.
///
/// * 401: the access token is refreshed once per search (``AccessTokenSource`` with
///   `forceRefresh`) and the request sent again; another 401 is an error.
/// * 403: reported as the missing permission.
/// * 429 and 503: `Retry-After` (seconds or HTTP date) is honoured up to
///   `maxRetryAfter` per wait and `maxThrottleRetries` times.
/// * Paging follows `@odata.nextLink` only while it stays on the Graph host, at most
///   ``maxPages`` pages, and stops at an empty page or a link it has followed before.
public struct GraphClient: Sendable {
    /// Gives the access token to send; `forceRefresh` after a 401.
    public typealias AccessTokenSource = @Sendable (_ forceRefresh: Bool) async throws -> String

    /// Sends one request with a token (`forceRefresh`: a new one, after a 401): the bearer
    /// token of an ``AccessTokenSource``, or the shared sign-in's token as
    /// ``SharedSession/send(_:account:scopes:resources:)`` sends it (a DPoP proof for a bound one).
    package typealias Sender = @Sendable (_ request: HTTPRequest, _ forceRefresh: Bool) async throws(GraphError) -> HTTPResponse

    /// e.g. `https://graph.microsoft.com/v1.0`.
    public var baseURL: URL
    package var send: Sender
    package var timeout: Duration
    package var maxRetryAfter: Duration
    package var maxThrottleRetries: Int
    package var sleep: @Sendable (Duration) async throws -> Void

    /// A client for the Graph API at `baseURL` (e.g. `https://graph.microsoft.com/v1.0`).
    /// - Parameters:
    ///   - baseURL: Graph's base URL, version included.
    ///   - transport: How requests are sent.
    ///   - timeout: The bound on each request.
    ///   - maxRetryAfter: The longest `Retry-After` waited for on 429 and 503.
    ///   - maxThrottleRetries: How many times a throttled request is tried again.
    ///   - sleep: How to wait (tests pass a fake clock).
    ///   - accessToken: Gives a valid access token; `true` asks for a new one after a 401.
    public init(
        baseURL: URL, transport: any HTTPTransport = CurlHTTPTransport(), timeout: Duration = .seconds(30),
        maxRetryAfter: Duration = .seconds(30), maxThrottleRetries: Int = 3,
        sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) },
        accessToken: @escaping AccessTokenSource
    ) {
        self.init(baseURL: baseURL, timeout: timeout, maxRetryAfter: maxRetryAfter, maxThrottleRetries: maxThrottleRetries, sleep: sleep) {
            request, forceRefresh throws(GraphError) in
            let token: String
            do { token = try await accessToken(forceRefresh) } catch { throw .token("\(error)") }
            var request = request
            request.headers.replace("Authorization", with: "Bearer \(token)")
            do throws(HTTPError) { return try await transport.send(request) } catch { throw .transport(error) }
        }
    }

    package init(
        baseURL: URL, timeout: Duration = .seconds(30), maxRetryAfter: Duration = .seconds(30), maxThrottleRetries: Int = 3,
        sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }, send: @escaping Sender
    ) {
        self.baseURL = baseURL
        self.send = send
        self.timeout = timeout
        self.maxRetryAfter = maxRetryAfter
        self.maxThrottleRetries = maxThrottleRetries
        self.sleep = sleep
    }

    /// The `$filter` for `text`: users whose display name, given name, surname, mail or user
    /// principal name starts with it (Graph compares case-insensitively).
    public static func filter(for text: String) -> String {
        let literal = ODataLiteral.string(text)
        return ["displayName", "givenName", "surname", "mail", "userPrincipalName"]
            .map { "startswith(\($0),\(literal))" }
            .joined(separator: " or ")
    }

    /// Users matching `text`, at most `top`, following `@odata.nextLink` as needed.
    public func searchUsers(_ text: String, top: Int = 25) async throws(GraphError) -> [GraphUser] {
        let trimmed = text.trimmingASCIIWhitespace()
        guard !trimmed.isEmpty else { throw .invalidQuery("the search text is empty") }
        guard trimmed.unicodeScalars.count <= 256 else { throw .invalidQuery("the search text is longer than 256 characters") }
        guard !trimmed.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw .invalidQuery("the search text contains control characters")
        }
        guard (1...999).contains(top) else { throw .invalidQuery("--top must be between 1 and 999") }
        let query = [
            ("$filter", Self.filter(for: trimmed)),
            ("$select", GraphUser.selectedFields.joined(separator: ",")),
            ("$top", String(min(top, 100))),
        ].map { "\($0.0)=\(QueryEncoding.escape($0.1))" }.joined(separator: "&")
        guard var next = URL(string: baseURL.absoluteString.trimmingSuffix("/") + "/users?" + query) else {
            throw .invalidQuery("the Graph base URL is invalid")
        }
        var users: [GraphUser] = []
        var seen: Set<String> = [next.absoluteString]
        var refreshUsed = false
        // Bounded whatever Graph answers: at most maxPages pages, an empty page or a
        // link already followed ends the search, and one forced refresh serves the whole search.
        for _ in 0..<Self.maxPages where users.count < top {
            let page = try await page(next, refreshUsed: &refreshUsed)
            users.append(contentsOf: page.value.prefix(top - users.count))
            guard let link = page.nextLink, !page.value.isEmpty else { break }
            guard let url = URL(string: link), url.scheme == baseURL.scheme, url.host == baseURL.host, url.port == baseURL.port
            else { throw .foreignNextLink(URL(string: link)?.redactedOrigin ?? "an invalid URL") }
            guard seen.insert(url.absoluteString).inserted else { break }
            next = url
        }
        return users
    }

    /// The most pages one search follows: `top` is at most 999 and Graph pages hold up to 100
    /// users, so ten pages always suffice for an honest server.
    public static let maxPages = 12

    private struct Page: Decodable {
        var value: [GraphUser]
        var nextLink: String?

        enum CodingKeys: String, CodingKey {
            case value
            case nextLink = "@odata.nextLink"
        }
    }

    private func page(_ url: URL, refreshUsed: inout Bool) async throws(GraphError) -> Page {
        let response = try await get(url, refreshUsed: &refreshUsed)
        do throws(JSONDocumentError) {
            return try JSONDocument.graphPage.decode(Page.self, from: response.body)
        } catch {
            throw .malformedResponse(error.reason)
        }
    }

    /// GET with the token, one silent refresh on 401 (for the whole search: `refreshUsed`),
    /// bounded waits on 429/503.
    private func get(_ url: URL, refreshUsed: inout Bool) async throws(GraphError) -> HTTPResponse {
        var refreshed = false
        var throttled = 0
        while true {
            var headers = HTTPHeaders()
            headers.add("Accept", "application/json")
            let response = try await send(HTTPRequest(url: url, headers: headers, timeout: timeout, maxResponseBytes: 4 << 20), refreshed)
            switch response.status {
            case 200:
                return response
            case 401 where !refreshUsed:
                refreshUsed = true
                refreshed = true
            case 401:
                throw .unauthorized(message: Self.graphError(response).message)
            case 403:
                throw .forbidden(missingPermission: "User.ReadBasic.All", message: Self.graphError(response).message)
            case 429, 503:
                let wait = RetryAfter.parse(response.headers["Retry-After"], now: Date())
                guard throttled < maxThrottleRetries, let wait, wait <= maxRetryAfter else {
                    throw .throttled(retryAfterSeconds: wait.map { Int($0.components.seconds) })
                }
                throttled += 1
                do { try await sleep(wait) } catch { throw .throttled(retryAfterSeconds: Int(wait.components.seconds)) }
            default:
                let error = Self.graphError(response)
                throw .http(status: response.status, code: error.code, message: error.message)
            }
        }
    }

    /// Graph's error body: `{"error":{"code":…,"message":…}}`.
    static func graphError(_ response: HTTPResponse) -> (code: String?, message: String?) {
        struct Body: Decodable {
            struct Inner: Decodable {
                var code: String?
                var message: String?
            }
            var error: Inner?
        }
        // An error body that is not Graph's JSON shape still leaves the status to report.
        guard let body = try? JSONDocument.graphError.decode(Body.self, from: response.body) else { return (nil, nil) }
        return (ProviderText.clean(body.error?.code, limit: 100), ProviderText.clean(body.error?.message))
    }
}

extension String {
    func trimmingSuffix(_ suffix: String) -> String {
        var text = self
        while text.hasSuffix(suffix) { text.removeLast(suffix.count) }
        return text
    }
}
