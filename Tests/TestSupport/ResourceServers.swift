import Foundation

/// `Tests/Peers/git_server.py`: git smart HTTP (`git http-backend`) that accepts only the
/// provider's live access tokens.
public final class GitTestServer: Sendable {
    public let process: PeerProcess
    /// `http://127.0.0.1:PORT`.
    public let baseURL: URL
    /// The directory of bare repositories it serves.
    public let root: URL

    public init(acceptTokensFrom provider: OIDCTestProvider, root: URL) throws {
        self.root = root
        process = try PeerProcess(
            name: "git", script: "git_server.py",
            arguments: ["--root", root.path, "--accept-tokens-from", provider.baseURL.absoluteString])
        baseURL = process.baseURL
    }

    public func stop() { process.stop() }

    /// The next `count` requests are answered 401 whatever their token (a server that no
    /// longer takes it), so git calls its helpers' `erase`.
    public func rejectNext(_ count: Int = 1) async throws {
        try await process.control("POST", "/_test/reject", json: ["count": .number(Double(count))])
    }

    /// (method, path, status, user) of every git request so far.
    public func requests() async throws -> [(method: String, path: String, status: Int, user: String?)] {
        try await process.control("GET", "/_test/requests")["requests"].array.map {
            ($0["method"].string ?? "", $0["path"].string ?? "", $0["status"].int ?? 0, $0["user"].string)
        }
    }
}
