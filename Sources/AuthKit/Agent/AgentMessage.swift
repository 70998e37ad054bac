import StrictJSON

/// One request to the agent: a line of JSON (docs/agent-protocol.md, protocol version 1).
///
/// The protocol is line-delimited: each request and each answer is one JSON object on one
/// line of at most ``AgentMessage/maximumLineBytes`` bytes. A connection may carry several
/// requests, one after the other.
package struct AgentRequest: Codable, Sendable, Equatable {
    package enum Operation: String, Codable, Sendable {
        /// Who is there: the agent's version, pid, and whether the socket is restricted.
        case hello
        /// An access token of the group's sign-in (or of other scopes).
        case token
        /// A verified id_token of the group's sign-in.
        case idToken = "id_token"
        /// A server refused this token: never hand it out again from memory.
        case rejected
        /// The group's sign-in changed in the store (login, logout): forget what is held.
        case forget
        /// Stop the agent (its own socket only).
        case stop
        /// The audit log: events after `since` (of `group` when named); its own socket only.
        case log
        /// How many tokens were served and refused per group, and the last asker; its own
        /// socket only.
        case stats
    }

    package var version: Int
    package var op: Operation
    package var group: String?
    /// Where the caller would read the sign-in (a store's name: `secret-service`,
    /// `kernel-keyring` …); a name no store has is not a protocol message.
    package var storage: StorageChoice?
    package var account: String?
    package var scopes: [String]?
    /// Seconds the token must still live (default 60).
    package var minTTL: Int?
    /// For `rejected`: the token the server refused.
    package var token: String?
    /// The program a token is for, when authkit asks for a program it runs (`exec`): named in
    /// the log and matched against a group's `allow` list.
    package var program: String?
    /// For `log`: the last event already seen.
    package var since: Int?

    package init(
        op: Operation, group: String? = nil, storage: StorageChoice? = nil, account: String? = nil, scopes: [String]? = nil,
        minTTL: Int? = nil, token: String? = nil
    ) {
        self.version = AgentMessage.version
        self.op = op
        self.group = group
        self.storage = storage
        self.account = account
        self.scopes = scopes
        self.minTTL = minTTL
        self.token = token
    }

    enum CodingKeys: String, CodingKey {
        case version = "v", op, group, storage, account, scopes, minTTL = "min_ttl", token, program, since
    }
}

/// The agent's answer to one request: a token, the agent's identity, or a failure.
package struct AgentResponse: Codable, Sendable, Equatable {
    package var version = AgentMessage.version
    package var ok: Bool
    package var token: String?
    /// Unix seconds.
    package var expiresAt: Int64?
    package var account: String?
    package var scopes: [String]?
    package var refreshed: Bool?
    /// `hello`: the agent's version, its process id, and whether this socket is a restricted
    /// (forwarded) one.
    package var agent: String?
    package var pid: Int32?
    package var restricted: Bool?
    /// `log`: events, oldest first.
    package var events: [AgentEvent]?
    /// `stats`: per group.
    package var counts: [String: AgentAuditLog.Counts]?
    /// `hello` on a restricted socket: the groups it serves, so that a client naming no group
    /// can use the one it serves.
    package var groups: [String]?
    package var error: AgentFailure?

    package init(ok: Bool) { self.ok = ok }

    package static func failure(_ failure: AgentFailure) -> AgentResponse {
        var response = AgentResponse(ok: false)
        response.error = failure
        return response
    }

    enum CodingKeys: String, CodingKey {
        case version = "v", ok, token, expiresAt = "expires_at", account, scopes, refreshed, agent, pid, restricted, groups, events, counts
        case error
    }
}

/// Why the agent gave no token: a code a program acts on, and the same sentence (and hint) the
/// caller would have printed had it read the store itself.
package struct AgentFailure: Codable, Sendable, Equatable, Error {
    /// What a program acts on.
    package enum Code: String, Codable, Sendable {
        case notSignedIn = "not_signed_in"
        case loginRequired = "login_required"
        /// The socket does not serve this.
        case refused
        case badRequest = "bad_request"
        /// Anything else; ``category`` says which kind.
        case failed
    }

    /// The kind of failure, as ``AuthKitError/Category`` (its exit code).
    package enum Category: String, Codable, Sendable {
        case usage, login, storage, provider, configuration
    }

    package var code: Code
    package var message: String
    package var hint: String?
    package var category: Category
    package var group: String?
    package var account: String?

    package init(code: Code, message: String, hint: String? = nil, category: Category, group: String? = nil, account: String? = nil) {
        self.code = code
        self.message = message
        self.hint = hint
        self.category = category
        self.group = group
        self.account = account
    }

    package static func badRequest(_ message: String) -> AgentFailure {
        AgentFailure(code: .badRequest, message: message, category: .usage)
    }

    package static func refused(_ message: String) -> AgentFailure {
        AgentFailure(code: .refused, message: message, category: .usage)
    }
}

/// The wire format's rules, in one place for the agent and its clients.
package enum AgentMessage {
    package static let version = 1
    /// A request or an answer is one line of at most this many bytes (an Entra access token is
    /// a few KiB; several fit).
    package static let maximumLineBytes = 64 << 10
    static let limits = JSONLimits(maximumBytes: maximumLineBytes, maximumDepth: 4)

    package static func encode(_ value: some Encodable) -> [UInt8] {
        // Our own types encode without failing: only strings, numbers, booleans and arrays.
        let bytes = (try? StrictJSONEncoder().encode(value)) ?? Array(#"{"v":1,"ok":false}"#.utf8)
        return bytes + [0x0A]
    }

    package static func decode<T: Decodable>(_ type: T.Type, from line: some Collection<UInt8>) throws(AgentFailure) -> T {
        guard line.count <= maximumLineBytes else { throw .badRequest("the message is longer than \(maximumLineBytes) bytes") }
        do {
            return try StrictJSONDecoder(limits: limits).decode(type, from: line)
        } catch {
            throw .badRequest("the message is not a protocol message: \(JSONDocument.reason(error))")
        }
    }
}

/// A store's name on the wire: a name no store has is refused as the message is.
extension StorageChoice: Codable {}
