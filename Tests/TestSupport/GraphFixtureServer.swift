import Foundation

/// The Microsoft Graph fixture server (`Tests/Peers/graph_server.py`): `GET /v1.0/users`
/// from `Fixtures/graph/users.json` with `$filter` (startswith … or …), `$select`, `$top`,
/// paging, and Graph-shaped errors on demand.
public final class GraphFixtureServer: Sendable {
    /// One request as the server saw it (never the token itself).
    public struct Request: Sendable {
        public var method: String
        public var path: String
        public var query: String
        /// The decoded `$filter`, if any.
        public var filter: String?
        /// The decoded `$select` and `$top`, if any.
        public var select: String?
        public var top: String?
        /// True when the request carried a `$skiptoken` (a page after the first).
        public var skiptoken: Bool
        /// When the server received it (seconds since 1970).
        public var at: Double
        public var status: Int
        public var bearerPresent: Bool
    }

    public let process: PeerProcess
    /// `http://127.0.0.1:PORT/v1.0`, what a profile's Graph base URL would be.
    public let graphBaseURL: URL

    private init(process: PeerProcess) throws(PeerError) {
        self.process = process
        guard let base = process.ready["graph_base_url"].string.flatMap(URL.init(string:)) else {
            throw .notReady(peer: process.name, reason: "ready line lacks graph_base_url", log: process.logTail())
        }
        graphBaseURL = base
    }

    /// Starts the server. With `acceptTokensFrom`, only access tokens that provider issued
    /// (and that are still active) are accepted. `users` replaces `Fixtures/graph/users.json`
    /// (a JSON object with a `value` array), e.g. with enough users to span several pages.
    public static func start(acceptTokensFrom provider: OIDCTestProvider? = nil, users: URL? = nil) throws(PeerError) -> GraphFixtureServer
    {
        var arguments: [String] = []
        if let provider { arguments += ["--accept-tokens-from", provider.baseURL.absoluteString] }
        if let users { arguments += ["--users", users.path] }
        return try GraphFixtureServer(process: PeerProcess(name: "graph", script: "graph_server.py", arguments: arguments))
    }

    public func stop() { process.stop() }

    /// The next `count` requests to /v1.0/users answer `status` (401, 403, 429 or 503) in Graph's shape.
    public func failNext(status: Int, count: Int = 1, retryAfter: Int? = nil) async throws {
        var body: [String: PeerJSON] = ["status": .number(Double(status)), "count": .number(Double(count))]
        if let retryAfter { body["retry_after"] = .number(Double(retryAfter)) }
        try await process.control("POST", "/_test/next", json: .object(body))
    }

    public func requests() async throws -> [Request] {
        try await process.control("GET", "/_test/requests")["requests"].array.map { entry in
            Request(
                method: entry["method"].string ?? "",
                path: entry["path"].string ?? "",
                query: entry["query"].string ?? "",
                filter: entry["filter"].string,
                select: entry["select"].string,
                top: entry["top"].string,
                skiptoken: entry["skiptoken"].bool ?? false,
                at: { if case .number(let value) = entry["at"] { return value } else { return 0 } }(),
                status: entry["status"].int ?? 0,
                bearerPresent: entry["bearer"].bool ?? false)
        }
    }

    public func clearRequests() async throws { try await process.control("DELETE", "/_test/requests") }

    /// Misbehaves until reset: `emptyLoop` answers every page empty with a nextLink to itself;
    /// `flaky401` answers every other request 401 whatever the token.
    public func misbehave(emptyLoop: Bool = false, flaky401: Bool = false) async throws {
        try await process.control("POST", "/_test/misbehave", json: ["empty_loop": .bool(emptyLoop), "flaky_401": .bool(flaky401)])
    }
    public func reset() async throws { try await process.control("POST", "/_test/reset") }
}
