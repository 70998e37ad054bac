import Foundation

/// A real OpenID provider on 127.0.0.1 for sign-in tests: our strict authlib provider
/// (`Tests/Peers/oidc_provider.py`) or oidc-provider-mock 0.3.4 (`mock_provider.py`).
/// See `Tests/Peers/README.md` for what each one checks.
public final class OIDCTestProvider: Sendable {
    public enum Implementation: String, Sendable {
        /// Strict: PKCE for public clients, rotation, revocation, device grant, iss, faults.
        case authlib
        /// oidc-provider-mock: any non-empty client secret passes, PKCE never checked.
        case mock
        /// Debian's glewlwyd (C): PKCE required for public clients, exact redirect URIs,
        /// non-standard errors (README: "glewlwyd"). Needs the apt package from scripts/bootstrap.
        case glewlwyd
    }

    /// Start-up options (flags of the peer scripts). Unset values keep the peer's defaults.
    public struct Options: Sendable {
        /// DPoP with the nonce required and pushed authorization requests (RFC 9449, 9126).
        public static var dpopAndPAR: Options {
            var options = Options()
            options.dpopNonce = true
            options.par = true
            return options
        }

        /// Appended to `http://127.0.0.1:PORT` to form the issuer; may contain `{tenantid}`.
        public var issuerPath: String?
        /// Adds `tid`/`oid` claims; required with a `{tenantid}` issuer path.
        public var tenantID: String?
        /// id_token signing algorithm: RS256 (default), PS256, ES256, ES384, EdDSA.
        public var alg: String?
        /// Algorithms of extra published keys that never sign.
        public var jwksExtra: [String] = []
        public var accessTokenTTL: Int?
        public var idTokenTTL: Int?
        public var deviceInterval: Int?
        /// RFC 9207 `iss` advertised and sent (default true).
        public var issParameter = true
        /// Refresh tokens rotated on use (default true).
        public var refreshRotation = true
        /// Registered redirect URIs of the built-in clients (default: 127.0.0.1 and [::1], `/` and `/callback`).
        public var redirectURIs: [String] = []
        /// The mock's `require_nonce`.
        public var requireNonce = false
        /// DPoP (RFC 9449): proofs checked and tokens bound (authlib: `--dpop`; glewlwyd: `--dpop`).
        public var dpop = false
        /// DPoP nonces mandatory (authlib: `--dpop-nonce`; glewlwyd: `--dpop-nonce-counter 2`).
        public var dpopNonce = false
        /// Pushed authorization requests (RFC 9126) offered, or required.
        public var par = false
        public var parRequired = false
        /// Resource indicators (RFC 8707): the allowed resources (`["*"]`: any; authlib
        /// `--resources`; glewlwyd `--resources`, listed under its `openid` scope).
        public var resources: [String] = []
        /// RFC 9068 JWT access tokens (authlib `--jwt-access-tokens`; glewlwyd's are always JWTs).
        public var jwtAccessTokens = false
        /// Token exchange (RFC 8693; authlib `--token-exchange`).
        public var tokenExchange = false
        public var extraArguments: [String] = []

        public init() {}
    }

    /// A client registered at the provider.
    public struct Client: Sendable {
        public var clientID: String
        public var clientSecret: String?
        public var tokenEndpointAuthMethod: String
        public var redirectURIs: [String]
        public var isPublic: Bool { tokenEndpointAuthMethod == "none" }
    }

    /// Request counts from `GET /_test/log` (no token values: the peer never records them).
    public struct RequestLog: Sendable {
        public var endpoints: [String: Int]
        public var grantTypes: [String: Int]
        public var requests: [PeerJSON]
        public var total: Int
        public func count(endpoint: String) -> Int { endpoints[endpoint] ?? 0 }
        public func count(grantType: String) -> Int { grantTypes[grantType] ?? 0 }
    }

    public let implementation: Implementation
    public let process: PeerProcess
    /// The issuer id_tokens carry.
    public let issuer: URL
    public let discoveryURL: URL
    public let clients: [Client]
    public let users: [PeerJSON]
    /// What the scripted browser needs in its environment for this provider (glewlwyd:
    /// admin credentials to register the exact loopback redirect URI).
    public let browserEnvironment: [String: String]

    public var baseURL: URL { process.baseURL }
    /// The public client (PKCE required) of the authlib provider.
    public var publicClient: Client? { clients.first { $0.isPublic } }
    /// The confidential client (client_secret_basic or _post).
    public var confidentialClient: Client? { clients.first { !$0.isPublic } }

    private init(implementation: Implementation, process: PeerProcess) throws(PeerError) {
        self.implementation = implementation
        self.process = process
        let ready = process.ready
        guard let issuer = ready["issuer"].string.flatMap(URL.init(string:)),
            let discovery = ready["discovery_url"].string.flatMap(URL.init(string:))
        else {
            throw .notReady(peer: process.name, reason: "ready line lacks issuer/discovery_url: \(ready)", log: process.logTail())
        }
        self.issuer = issuer
        self.discoveryURL = discovery
        self.clients = ready["clients"].array.map { client in
            Client(
                clientID: client["client_id"].string ?? "",
                clientSecret: client["client_secret"].string,
                tokenEndpointAuthMethod: client["token_endpoint_auth_method"].string ?? "none",
                redirectURIs: client["redirect_uris"].array.compactMap(\.string))
        }
        self.users = ready["users"].array
        self.browserEnvironment = ready["browser_environment"].object.compactMapValues(\.string)
    }

    /// Starts a provider and waits until it serves.
    public static func start(_ implementation: Implementation = .authlib, options: Options = Options()) throws(PeerError)
        -> OIDCTestProvider
    {
        var arguments: [String] = []
        switch implementation {
        case .authlib:
            if let path = options.issuerPath { arguments += ["--issuer-path", path] }
            if let tenant = options.tenantID { arguments += ["--tenant-id", tenant] }
            if let alg = options.alg { arguments += ["--alg", alg] }
            if !options.jwksExtra.isEmpty { arguments += ["--jwks-extra", options.jwksExtra.joined(separator: ",")] }
            if let ttl = options.accessTokenTTL { arguments += ["--access-token-ttl", String(ttl)] }
            if let ttl = options.idTokenTTL { arguments += ["--id-token-ttl", String(ttl)] }
            if let interval = options.deviceInterval { arguments += ["--device-interval", String(interval)] }
            if !options.issParameter { arguments.append("--no-iss-parameter") }
            if !options.refreshRotation { arguments.append("--no-refresh-rotation") }
            for uri in options.redirectURIs { arguments += ["--redirect-uri", uri] }
            if options.dpop { arguments.append("--dpop") }
            if options.dpopNonce { arguments.append("--dpop-nonce") }
            if options.par { arguments.append("--par") }
            if options.parRequired { arguments.append("--par-required") }
            if !options.resources.isEmpty { arguments += ["--resources", options.resources.joined(separator: ",")] }
            if options.jwtAccessTokens { arguments.append("--jwt-access-tokens") }
            if options.tokenExchange { arguments.append("--token-exchange") }
        case .mock:
            if let ttl = options.accessTokenTTL { arguments += ["--access-token-ttl", String(ttl)] }
            if options.requireNonce { arguments.append("--require-nonce") }
        case .glewlwyd:
            if let ttl = options.accessTokenTTL { arguments += ["--access-token-ttl", String(ttl)] }
            if options.dpop { arguments.append("--dpop") }
            if options.dpopNonce { arguments += ["--dpop-nonce-counter", "2"] }
            if options.par { arguments.append("--par") }
            if options.parRequired { arguments.append("--par-required") }
            if !options.resources.isEmpty { arguments += ["--resources", options.resources.joined(separator: ",")] }
        }
        arguments += options.extraArguments
        let (name, script): (String, String) =
            switch implementation {
            case .authlib: ("oidc-provider", "oidc_provider.py")
            case .mock: ("oidc-provider-mock", "mock_provider.py")
            case .glewlwyd: ("glewlwyd", "glewlwyd/glewlwyd_provider.py")
            }
        return try OIDCTestProvider(
            implementation: implementation, process: PeerProcess(name: name, script: script, arguments: arguments, readyTimeout: 60))
    }

    /// glewlwyd matches loopback redirect URIs port included: registers `uri` for the client
    /// (default: the public one) before a pushed authorization request names it (glewlwyd only).
    public func registerRedirect(_ uri: String, clientID: String? = nil) async throws {
        let argv = process.ready["register_redirect"].array.compactMap(\.string)
        guard let program = argv.first else { throw HarnessError("\(process.name) cannot register redirect URIs") }
        var arguments = Array(argv.dropFirst())
        if let clientID { arguments += ["--client-id", clientID] }
        arguments.append(uri)
        let result = try await ProcessRunner.run(URL(fileURLWithPath: program), arguments, timeout: 30)
        guard result.status == 0 else { throw HarnessError("register-redirect \(uri): \(result.stderr)") }
    }

    /// Stops the provider (also done when the value is released).
    public func stop() { process.stop() }

    // MARK: Control API

    /// Counts per endpoint and grant_type, and the request list.
    public func log() async throws -> RequestLog {
        let answer = try await process.control("GET", "/_test/log")
        return RequestLog(
            endpoints: answer["counts"]["endpoints"].object.compactMapValues(\.int),
            grantTypes: answer["counts"]["grant_types"].object.compactMapValues(\.int),
            requests: answer["requests"].array,
            total: answer["total"].int ?? 0)
    }

    /// Forgets the request log (e.g. before counting refreshes in a race).
    public func clearLog() async throws { try await process.control("DELETE", "/_test/log") }

    /// Everything issued or seen so far, with kinds (`GET /_test/issued`).
    public func issued() async throws -> PeerJSON { try await process.control("GET", "/_test/issued") }

    /// Every secret value the provider issued or received: codes, access/refresh/id tokens,
    /// device codes, client secrets, code verifiers. Scan test output for these.
    public func issuedSecrets() async throws -> [String] {
        try await issued()["values"].array.compactMap(\.string)
    }

    /// A new signing key with a new kid; the old one leaves the JWKS unless `keepOld`.
    /// Returns the new kid. (authlib provider only.)
    @discardableResult
    public func rotateKeys(keepOld: Bool = false, alg: String? = nil) async throws -> String {
        var body: [String: PeerJSON] = ["keep_old": .bool(keepOld)]
        if let alg { body["alg"] = .string(alg) }
        return try await process.control("POST", "/_test/rotate-keys", json: .object(body))["kid"].string ?? ""
    }

    /// The DPoP proofs the provider saw (`GET /_test/dpop`; authlib provider only): never a
    /// token or nonce value.
    public func dpopLog() async throws -> PeerJSON { try await process.control("GET", "/_test/dpop") }

    /// Adds a fault (authlib provider only).
    public func setFault(_ fault: ProviderFault) async throws {
        try await process.control("POST", "/_test/faults", json: ["faults": [fault.json]])
    }

    public func clearFaults() async throws { try await process.control("DELETE", "/_test/faults") }

    /// True while a token answer is held by a ``ProviderFault/hold(grantType:seconds:)`` fault.
    public func isHolding() async throws -> Bool { try await process.control("GET", "/_test/release")["holding"].bool ?? false }

    /// Lets a held token answer go.
    public func release() async throws { try await process.control("POST", "/_test/release") }

    /// Changes run-time settings, e.g. `["access_token_ttl": 1]` (README: "Control API").
    @discardableResult
    public func configure(_ settings: [String: PeerJSON]) async throws -> PeerJSON {
        try await process.control("POST", "/_test/config", json: .object(settings))
    }

    /// Forgets codes, tokens, faults and the log; restores the start-up config.
    public func reset() async throws { try await process.control("POST", "/_test/reset") }

    /// The discovery document.
    public func discovery() async throws -> PeerJSON {
        let response = try await TestHTTP.get(discoveryURL)
        guard response.status == 200 else {
            throw PeerError.control(peer: process.name, request: "GET discovery", status: response.status, body: response.text)
        }
        return try response.json()
    }
}

/// A misbehaviour the authlib provider injects on request (`POST /_test/faults`).
public struct ProviderFault: Sendable {
    public var json: PeerJSON

    public init(kind: String, _ parameters: [String: PeerJSON] = [:], count: Int = 1, untilCleared: Bool = false) {
        var body = parameters
        body["kind"] = .string(kind)
        body["count"] = .number(Double(count))
        if untilCleared { body["until_cleared"] = true }
        json = .object(body)
    }

    // id_token contents
    public static let idTokenWrongNonce = ProviderFault(kind: "id_token_wrong_nonce")
    public static let idTokenWrongIssuer = ProviderFault(kind: "id_token_wrong_iss")
    public static let idTokenWrongAudience = ProviderFault(kind: "id_token_wrong_aud")
    public static let idTokenExpired = ProviderFault(kind: "id_token_expired")
    /// Signed by a key whose kid the JWKS never lists.
    public static let idTokenUnknownKey = ProviderFault(kind: "id_token_unknown_key")
    /// Signed under a published kid, signature bytes altered.
    public static let idTokenBadSignature = ProviderFault(kind: "id_token_bad_signature")
    public static let idTokenOmitted = ProviderFault(kind: "id_token_omitted")
    /// The id_token of the next refresh names another subject.
    public static let refreshDifferentSubject = ProviderFault(kind: "refresh_different_sub")

    // the redirect back to the client
    public static let authorizeWrongIssuer = ProviderFault(kind: "authorize_wrong_iss")
    public static let authorizeNoIssuer = ProviderFault(kind: "authorize_no_iss")
    public static func authorizeError(_ error: String = "access_denied", description: String = "The user said no (test fault)")
        -> ProviderFault
    {
        ProviderFault(kind: "authorize_error", ["error": .string(error), "error_description": .string(description)])
    }

    // any endpoint: discovery, jwks, authorize, token, userinfo, revocation, device_authorization, device
    /// An RFC 6749 §5.2 error body (on the token endpoint; optionally only for one grant_type).
    public static func error(
        _ error: String, description: String? = nil, status: Int = 400, endpoint: String = "token", grantType: String? = nil,
        count: Int = 1
    ) -> ProviderFault {
        var parameters: [String: PeerJSON] = ["error": .string(error), "status": .number(Double(status)), "endpoint": .string(endpoint)]
        if let description { parameters["error_description"] = .string(description) }
        if let grantType { parameters["grant_type"] = .string(grantType) }
        return ProviderFault(kind: "error", parameters, count: count)
    }
    public static func http500(_ endpoint: String, count: Int = 1) -> ProviderFault {
        ProviderFault(kind: "http_500", ["endpoint": .string(endpoint)], count: count)
    }
    public static func malformed(_ endpoint: String, body: String = "{\"access_token\": \"truncated", count: Int = 1) -> ProviderFault {
        ProviderFault(kind: "malformed", ["endpoint": .string(endpoint), "body": .string(body)], count: count)
    }
    /// Closes the connection without an answer, before the request is processed.
    public static func close(_ endpoint: String, count: Int = 1) -> ProviderFault {
        ProviderFault(kind: "close", ["endpoint": .string(endpoint)], count: count)
    }
    /// Processes the token request (a code or refresh token is used up, new tokens are
    /// issued) and then closes the connection: the client never sees the answer.
    public static func closeAfterProcessing(grantType: String? = nil, count: Int = 1) -> ProviderFault {
        var parameters: [String: PeerJSON] = ["endpoint": "token", "after": true]
        if let grantType { parameters["grant_type"] = .string(grantType) }
        return ProviderFault(kind: "close", parameters, count: count)
    }
    public static func delay(_ endpoint: String, milliseconds: Int, count: Int = 1, untilCleared: Bool = false) -> ProviderFault {
        ProviderFault(
            kind: "delay", ["endpoint": .string(endpoint), "ms": .number(Double(milliseconds))], count: count, untilCleared: untilCleared)
    }
    /// Merges `patch` into the endpoint's JSON answer (`null` removes a member).
    public static func patchJSON(_ endpoint: String, _ patch: [String: PeerJSON], count: Int = 1) -> ProviderFault {
        ProviderFault(kind: "patch_json", ["endpoint": .string(endpoint), "patch": .object(patch)], count: count)
    }
    public static let deviceSlowDown = ProviderFault(kind: "device_slow_down")
    /// The next proof's nonce is refused (`use_dpop_nonce`, a new nonce), even if current.
    public static let dpopNonceRotate = ProviderFault(kind: "dpop_nonce_rotate")
    /// A proved token request answered `Bearer` with unbound tokens: a downgrade.
    public static let dpopTokenTypeBearer = ProviderFault(kind: "dpop_token_type_bearer")
    /// A request without proof answered `token_type` `DPoP`.
    public static let dpopTokenTypeDPoPUnasked = ProviderFault(kind: "dpop_token_type_dpop_unasked")
    /// The next token answer that carries a resource gets the default audience (RFC 8707 ignored).
    public static let ignoreResource = ProviderFault(kind: "ignore_resource")
    /// The next refresh with a `scope` gets the grant's full scope, and says so (as glewlwyd).
    public static let ignoreScopeNarrowing = ProviderFault(kind: "ignore_scope_narrowing")
    /// The next token exchange ignores `scope`, `audience` and `resource`.
    public static let widenExchange = ProviderFault(kind: "widen_exchange")
    /// The next proved request (at `endpoint`, when named) refused with `invalid_dpop_proof`.
    public static func dpopRefuseProof(_ endpoint: String? = nil) -> ProviderFault {
        ProviderFault(kind: "dpop_refuse_proof", endpoint.map { ["endpoint": .string($0)] } ?? [:])
    }

    // a refreshed id_token breaking one OIDC Core §12.2 rule
    public static let refreshOlderIssuedAt = ProviderFault(kind: "refresh_older_iat")
    public static let refreshOtherAuthTime = ProviderFault(kind: "refresh_other_auth_time")
    public static let refreshWithNonce = ProviderFault(kind: "refresh_with_nonce")
    /// After processing a token request (a refresh token rotated), the answer repeats `member`.
    public static func duplicateMember(_ member: String, value: PeerJSON = "second-value", grantType: String? = nil) -> ProviderFault {
        var parameters: [String: PeerJSON] = ["endpoint": "token", "after": true, "member": .string(member), "value": value]
        if let grantType { parameters["grant_type"] = .string(grantType) }
        return ProviderFault(kind: "duplicate_member", parameters)
    }
    /// After processing a token request, the answer waits until ``OIDCTestProvider/release()``.
    public static func hold(grantType: String? = nil, seconds: Int = 30) -> ProviderFault {
        var parameters: [String: PeerJSON] = ["endpoint": "token", "after": true, "seconds": .number(Double(seconds))]
        if let grantType { parameters["grant_type"] = .string(grantType) }
        return ProviderFault(kind: "hold", parameters)
    }

    /// The same fault applied until `clearFaults()`.
    public var untilCleared: ProviderFault {
        var copy = self
        if case .object(var body) = copy.json {
            body["until_cleared"] = true
            copy.json = .object(body)
        }
        return copy
    }
}
