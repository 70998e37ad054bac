import AuthKitCore
import StrictJSON

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One request to the agent, as the agent acts on it: each operation with the fields it needs,
/// checked when the line is decoded (docs/agent-protocol.md, protocol version 1). On the wire it
/// is one line of JSON with `v`, `op` and the operation's members (``Wire``).
package enum AgentRequest: Sendable, Equatable {
    /// Who is there: the agent's version, pid, and whether the socket is restricted.
    case hello
    /// An access token of the group's sign-in (or of other scopes).
    case token(AgentTokenRequest)
    /// A verified id_token of the group's sign-in.
    case idToken(AgentTokenRequest)
    /// A server refused this token: never hand it out again from memory.
    case rejected(group: String, storage: StorageChoice?, token: String)
    /// The group's sign-in changed in the store (login, logout): forget what is held.
    case forget(group: String)
    /// Stop the agent (its own socket only).
    case stop
    /// The audit log: events after `since` (of `group` when named); its own socket only.
    case log(since: Int, group: String?)
    /// How many tokens were served and refused per group, and the last asker; its own socket only.
    case stats
    /// A forward that waits for its far side (`authkit ssh`) serves nothing until this comes
    /// with the key it was opened with, from the far side once it checked that only its account
    /// can reach the socket.
    case open(key: String)
    /// A DPoP proof (RFC 9449) signed with the key of the group's sign-in, for a request the
    /// asker makes with its access token: the key never leaves the agent's machine.
    case proof(AgentProofRequest)

    /// The operation's name on the wire.
    package var operation: Wire.Operation {
        switch self {
        case .hello: .hello
        case .token: .token
        case .idToken: .idToken
        case .rejected: .rejected
        case .forget: .forget
        case .stop: .stop
        case .log: .log
        case .stats: .stats
        case .open: .open
        case .proof: .proof
        }
    }

    /// The group a request is about, if any.
    package var group: String? {
        switch self {
        case .token(let request), .idToken(let request): request.group
        case .proof(let request): request.token.group
        case .rejected(let group, _, _), .forget(let group): group
        case .log(_, let group): group
        case .hello, .stop, .stats, .open: nil
        }
    }

    /// The request line's members as JSON has them: every member optional, read strictly.
    package struct Wire: Codable, Sendable, Equatable {
        package enum Operation: String, Codable, Sendable {
            case hello, token, idToken = "id_token", rejected, forget, stop, log, stats, open, proof
        }

        package var version = AgentMessage.version
        package var op: Operation
        package var group: String?
        /// Where the caller would read the sign-in (a store's name); a name no store has is not
        /// a protocol message.
        package var storage: StorageChoice?
        package var account: String?
        package var scopes: [String]?
        /// RFC 8707 resources the token is for.
        package var resources: [String]?
        package var minTTL: Int?
        package var token: String?
        package var program: String?
        package var since: Int?
        package var key: String?
        /// `proof`: the request's method and URL, the access token's hash, the server's nonce.
        package var method: String?
        package var url: String?
        package var ath: String?
        package var nonce: String?

        enum CodingKeys: String, CodingKey {
            case version = "v", op, group, storage, account, scopes, resources, minTTL = "min_ttl", token, program, since, key
            case method, url, ath, nonce
        }
    }

    /// The request a line's members make, or why they make none.
    package init(_ wire: Wire) throws(AgentFailure) {
        guard wire.version == AgentMessage.version else {
            throw .badRequest("protocol version \(wire.version) is not spoken here (this agent speaks \(AgentMessage.version))")
        }
        func group(_ what: String) throws(AgentFailure) -> String {
            guard let group = wire.group, !group.isEmpty else { throw .badRequest("\(what) needs a group") }
            return group
        }
        switch wire.op {
        case .hello: self = .hello
        case .stop: self = .stop
        case .stats: self = .stats
        case .log: self = .log(since: wire.since ?? 0, group: wire.group)
        case .open:
            guard let key = wire.key, !key.isEmpty else { throw .badRequest("open needs the forward's key") }
            self = .open(key: key)
        case .forget: self = .forget(group: try group("forget"))
        case .rejected:
            guard let token = wire.token, !token.isEmpty else { throw .badRequest("rejected needs the token that was refused") }
            self = .rejected(group: try group("rejected"), storage: wire.storage, token: token)
        case .token, .idToken:
            let minTTL = wire.minTTL ?? AgentTokenRequest.defaultMinTTL
            guard (0...AgentTokenRequest.maximumMinTTL).contains(minTTL) else {
                throw .badRequest("min_ttl must be between 0 and \(AgentTokenRequest.maximumMinTTL)")
            }
            let resources = wire.resources ?? []
            guard wire.op == .token || resources.isEmpty else { throw .badRequest("an id_token has no resources") }
            guard resources.count <= 16, resources.allSatisfy(TokenText.isResource) else {
                throw .badRequest("resources are absolute URIs without fragment (RFC 8707), at most 16")
            }
            let request = AgentTokenRequest(
                group: try group("a token request"), storage: wire.storage, account: wire.account, scopes: wire.scopes ?? [],
                resources: resources, minTTL: minTTL, program: wire.program)
            self = wire.op == .token ? .token(request) : .idToken(request)
        case .proof:
            guard let method = wire.method, let text = wire.url, let url = URL(string: text), let ath = wire.ath else {
                throw .badRequest("proof needs the request's method, url and ath (the access token's hash)")
            }
            let proof: DPoPProof
            do throws(DPoPError) {
                proof = try DPoPProof(method: method, url: url, accessTokenHash: ath, nonce: wire.nonce)
            } catch {
                throw .badRequest("proof: \(error)")
            }
            let base = AgentTokenRequest(group: try group("proof"), storage: wire.storage, account: wire.account, program: wire.program)
            self = .proof(AgentProofRequest(token: base, proof: proof))
        }
    }

    /// The line's members.
    package var wire: Wire {
        var wire = Wire(op: operation)
        switch self {
        case .hello, .stop, .stats: break
        case .token(let request), .idToken(let request):
            wire.group = request.group
            wire.storage = request.storage
            wire.account = request.account
            wire.scopes = request.scopes.isEmpty ? nil : request.scopes
            wire.resources = request.resources.isEmpty ? nil : request.resources
            wire.minTTL = request.minTTL
            wire.program = request.program
        case .rejected(let group, let storage, let token):
            wire.group = group
            wire.storage = storage
            wire.token = token
        case .forget(let group): wire.group = group
        case .open(let key): wire.key = key
        case .proof(let request):
            wire.group = request.token.group
            wire.storage = request.token.storage
            wire.account = request.token.account
            wire.program = request.token.program
            wire.method = request.proof.method
            wire.url = request.proof.target
            wire.ath = request.proof.accessTokenHash
            wire.nonce = request.proof.nonce
        case .log(let since, let group):
            wire.since = since
            wire.group = group
        }
        return wire
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
    /// `DPoP` for a token bound to the sign-in's key (absent: `Bearer`).
    package var tokenType: String?
    /// The resources (RFC 8707) a narrowed token is for.
    package var resources: [String]?
    /// True: the agent honoured the request's `scopes` and `resources` (it checks a narrowed
    /// token itself), so more scopes than asked are what the provider issued for other scopes,
    /// not the sign-in's own token. Absent from agents older than narrowing.
    package var narrowing: Bool?
    /// `proof`: the DPoP proof the agent signed.
    package var proof: String?
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
        case tokenType = "token_type", proof, resources, narrowing
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
        /// A forward that waits for its far side's `open` (``AgentRequest/open(key:)``).
        case notOpen = "not_open"
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

/// The wire format's rules, in one place for the agent and its clients: the version, the line
/// limits, and the one encoder and decoder of its lines.
package enum AgentMessage {
    package static let version = 1
    /// A request is one line of at most this many bytes: a few names and at most one token.
    package static let maximumRequestBytes = 16 << 10
    /// An answer is one line of at most this many bytes (an Entra access token is a few KiB;
    /// a `log` answer holds forty events).
    package static let maximumAnswerBytes = AgentExchange.maximumAnswerBytes
    static let depth = AgentExchange.maximumDepth

    package static func encode(_ value: some Encodable) -> [UInt8] {
        // Our own types encode without failing: only strings, numbers, booleans and arrays.
        let bytes = (try? StrictJSONEncoder().encode(value)) ?? Array(#"{"v":1,"ok":false}"#.utf8)
        return bytes + [0x0A]
    }

    /// A request line.
    package static func encode(_ request: AgentRequest) -> [UInt8] { encode(request.wire) }

    /// A request line, checked: each operation's required members, their ranges.
    package static func decodeRequest(from line: some Collection<UInt8>) throws(AgentFailure) -> AgentRequest {
        try AgentRequest(decode(AgentRequest.Wire.self, from: line, limit: maximumRequestBytes))
    }

    /// An answer line.
    package static func decodeAnswer(from line: some Collection<UInt8>) throws(AgentFailure) -> AgentResponse {
        try decode(AgentResponse.self, from: line, limit: maximumAnswerBytes)
    }

    static func decode<T: Decodable>(_ type: T.Type, from line: some Collection<UInt8>, limit: Int) throws(AgentFailure) -> T {
        guard line.count <= limit else { throw .badRequest("the message is longer than \(limit) bytes") }
        do {
            return try StrictJSONDecoder(limits: JSONLimits(maximumBytes: limit, maximumDepth: depth)).decode(type, from: line)
        } catch {
            throw .badRequest("the message is not a protocol message: \(JSONDocument.reason(error))")
        }
    }
}

/// A store's name on the wire: a name no store has is refused as the message is.
extension StorageChoice: Codable {}
