import AuthKitCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Talks to the token endpoint (RFC 6749 §4.1.3, §6; RFC 7636 §4.5; RFC 8628 §3.4).
///
/// Form-encoded POSTs with bounded time and size. A request is sent again only when it
/// certainly never reached the server (name resolution or connection failed): resending
/// after that could redeem a code twice or burn a rotating refresh token. Never after a 4xx.
package struct TokenEndpointClient: Sendable {
    package var endpoint: URL
    package var client: OAuthClient
    /// `token_endpoint_auth_methods_supported` from discovery, to choose Basic or POST.
    package var authMethodsSupported: [String]?
    package var transport: any HTTPTransport
    package var timeout: Duration
    package var maxResponseBytes: Int
    /// Pause before the single retry after a connection failure.
    package var retryDelay: Duration
    package var clock: @Sendable () -> Date
    /// The key every request is proved with (DPoP, RFC 9449), or nil for bearer tokens: then
    /// an answer of `token_type` `DPoP` is refused, and with a key an answer of `Bearer` is.
    package var dpop: DPoPKey?
    /// Where the servers' newest `DPoP-Nonce`s are kept.
    package var nonces: DPoPNonces = .shared

    package init(
        endpoint: URL, client: OAuthClient, authMethodsSupported: [String]? = nil,
        transport: any HTTPTransport = CurlHTTPTransport(), timeout: Duration = .seconds(30),
        maxResponseBytes: Int = 1 << 20, retryDelay: Duration = .seconds(1),
        clock: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.endpoint = endpoint
        self.client = client
        self.authMethodsSupported = authMethodsSupported
        self.transport = transport
        self.timeout = timeout
        self.maxResponseBytes = maxResponseBytes
        self.retryDelay = retryDelay
        self.clock = clock
    }

    /// Redeems an authorization code with its PKCE verifier.
    package func exchange(_ grant: AuthorizationGrant, verifier: PKCEVerifier, redirectURI: String)
        async throws(TokenEndpointError) -> TokenResponse
    {
        try await request([
            ("grant_type", "authorization_code"),
            ("code", grant.code),
            ("redirect_uri", redirectURI),
            ("code_verifier", verifier.value),
        ])
    }

    /// What a refresh got: the tokens, or why not — with the refresh token a 200 answer carried
    /// when the rest of it was refused (the provider has rotated it by then).
    package enum RefreshAnswer: Sendable, CustomStringConvertible, CustomReflectable {
        case tokens(TokenResponse)
        case refused(TokenEndpointError, rotatedRefreshToken: String?)

        package var description: String {
            switch self {
            case .tokens(let tokens): return "\(tokens)"
            case .refused(let error, let rotated): return "\(error)\(rotated == nil ? "" : " (a rotated refresh token came with it)")"
            }
        }
        package var customMirror: Mirror { Mirror(self, children: ["summary": description]) }
    }

    /// Uses a refresh token: the tokens, or the error (see ``refreshAnswer(_:scopes:resources:)``).
    package func refresh(_ refreshToken: String, scopes: [String]? = nil, resources: [String] = []) async throws(TokenEndpointError)
        -> TokenResponse
    {
        switch await refreshAnswer(refreshToken, scopes: scopes, resources: resources) {
        case .tokens(let tokens): return tokens
        case .refused(let error, _): throw error
        }
    }

    /// Uses a refresh token. `scopes` narrows the request (nil: the original grant's scopes),
    /// `resources` names the APIs the token is for (RFC 8707 §2.2).
    package func refreshAnswer(_ refreshToken: String, scopes: [String]? = nil, resources: [String] = []) async -> RefreshAnswer {
        var fields: [(name: String, value: String)] = [("grant_type", "refresh_token"), ("refresh_token", refreshToken)]
        if let scopes, !scopes.isEmpty { fields.append(("scope", scopes.joined(separator: " "))) }
        for resource in resources { fields.append(("resource", resource)) }
        let response: HTTPResponse
        do { response = try await post(fields) } catch { return .refused(error, rotatedRefreshToken: nil) }
        // Its token_type is the refresh's to judge: a wrong one must not lose a rotated
        // refresh token (RefreshStateMachine keeps it), nor must any other flaw of a 200 answer.
        do throws(TokenEndpointError) {
            return .tokens(try tokens(from: response, checkingType: false))
        } catch {
            let rotated = response.status == 200 ? TokenResponse.refreshTokenOnly(body: response.body) : nil
            return .refused(error, rotatedRefreshToken: rotated == refreshToken ? nil : rotated)
        }
    }

    /// RFC 8693's grant type.
    package static let tokenExchangeGrant = "urn:ietf:params:oauth:grant-type:token-exchange"
    static let accessTokenType = "urn:ietf:params:oauth:token-type:access_token"

    /// Exchanges `subjectToken` (an access token of the sign-in) for one for `audience` and
    /// `resources`, with at most `scopes` (RFC 8693 §2.1). No refresh token comes back.
    package func exchange(_ subjectToken: String, audience: String?, resources: [String], scopes: [String]?)
        async throws(TokenEndpointError)
        -> TokenResponse
    {
        var fields: [(name: String, value: String)] = [
            ("grant_type", Self.tokenExchangeGrant), ("subject_token", subjectToken), ("subject_token_type", Self.accessTokenType),
            ("requested_token_type", Self.accessTokenType),
        ]
        if let audience { fields.append(("audience", audience)) }
        for resource in resources { fields.append(("resource", resource)) }
        if let scopes, !scopes.isEmpty { fields.append(("scope", scopes.joined(separator: " "))) }
        let tokens = try await request(fields)
        if let issued = tokens.issuedTokenType, issued != Self.accessTokenType {
            throw .malformedResponse("the exchange issued a \(ProviderText.clean(issued, limit: 80) ?? "?"), not an access token")
        }
        return tokens
    }

    /// Sends a token request with client authentication and returns the tokens.
    func request(_ fields: [(name: String, value: String)], checkingType: Bool = true) async throws(TokenEndpointError) -> TokenResponse {
        try tokens(from: try await post(fields), checkingType: checkingType)
    }

    /// The tokens of a token endpoint's answer, or its error.
    private func tokens(from response: HTTPResponse, checkingType: Bool) throws(TokenEndpointError) -> TokenResponse {
        guard response.status == 200 else {
            throw TokenEndpointError.oauthError(body: response.body, status: response.status) ?? .httpStatus(response.status)
        }
        let tokens = try TokenResponse(body: response.body, receivedAt: clock())
        // A proof asked for a bound token, and no proof for a bearer one (RFC 9449 §5): an
        // answer of the other kind is a provider (or something between) not doing what was asked.
        let asked = dpop == nil ? "Bearer" : "DPoP"
        guard tokens.tokenType == asked || !checkingType else { throw .tokenTypeMismatch(asked: asked, answered: tokens.tokenType) }
        return tokens
    }

    /// Pushes an authorization request (RFC 9126 §2) to `endpoint`, with client authentication
    /// and without a proof (the request binds the code with `dpop_jkt`); returns its `request_uri`.
    func push(_ fields: [(name: String, value: String)], to endpoint: URL) async throws(TokenEndpointError) -> PushedRequest {
        let response = try await post(fields, to: endpoint, proved: false)
        guard response.status == 201 || response.status == 200 else {
            throw TokenEndpointError.oauthError(body: response.body, status: response.status) ?? .httpStatus(response.status)
        }
        return try PushedRequest(body: response.body)
    }

    /// One form POST to the endpoint (with a DPoP proof when there is a key, unless `proved`
    /// is false), retried once if it never reached the server, and once more, with the nonce
    /// it sent, when the server answers `use_dpop_nonce` (RFC 9449 §8). Every attempt carries
    /// a fresh proof.
    func post(_ fields: [(name: String, value: String)], to url: URL? = nil, proved: Bool = true) async throws(TokenEndpointError)
        -> HTTPResponse
    {
        let target = url ?? endpoint
        var fields = fields
        var headers = HTTPHeaders()
        client.authenticate(fields: &fields, headers: &headers, supportedMethods: authMethodsSupported)
        // A pushed authorization request names its client_id as an authorization request does,
        // and client authentication may add it again: once is all a form may say it.
        if let first = fields.firstIndex(where: { $0.name == "client_id" }) {
            fields = fields.enumerated().filter { $0.offset == first || $0.element.name != "client_id" }.map(\.element)
        }
        let key = proved ? dpop : nil
        let form = fields
        let baseHeaders = headers
        func attempt() async throws(TokenEndpointError) -> HTTPResponse {
            var headers = baseHeaders
            if let key {
                do {
                    let proof = try DPoPProof(method: "POST", url: target, nonce: nonces.nonce(for: target))
                    headers.replace("DPoP", with: try proof.signed(with: key.key, issuedAt: clock()))
                } catch {
                    throw .proof(error)
                }
            }
            let request = HTTPRequest.form(target, fields: form, headers: headers, timeout: timeout, maxResponseBytes: maxResponseBytes)
            let response: HTTPResponse
            do {
                response = try await transport.send(request)
            } catch  where error.isSafeToRetry {
                try? await Task.sleep(for: retryDelay)
                do { response = try await transport.send(request) } catch { throw .transport(error) }
            } catch {
                throw .transport(error)
            }
            if key != nil { nonces.remember(response, from: target) }
            return response
        }
        let response = try await attempt()
        guard key != nil, response.status == 400 || response.status == 401,
            case .oauth(code: "use_dpop_nonce", _, _)? = TokenEndpointError.oauthError(body: response.body, status: response.status),
            nonces.nonce(for: target) != nil
        else { return response }
        return try await attempt()
    }
}

/// A pushed authorization request's answer (RFC 9126 §2.2): the `request_uri` the
/// authorization URL names instead of the request's parameters.
package struct PushedRequest: Sendable, Equatable {
    package var requestURI: String
    package var expiresIn: Int

    init(body: [UInt8]) throws(TokenEndpointError) {
        struct Raw: Decodable {
            var request_uri: String?
            var expires_in: LenientInteger?
        }
        let raw: Raw
        do throws(JSONDocumentError) {
            raw = try JSONDocument.tokenResponse.decode(Raw.self, from: body)
        } catch {
            throw .malformedResponse(error.reason)
        }
        guard let uri = raw.request_uri, !uri.isEmpty, uri.utf8.count <= 2048, TokenText.isTransportable(uri) else {
            throw .malformedResponse("the pushed authorization request's answer has no usable request_uri")
        }
        guard let expiresIn = raw.expires_in?.value, expiresIn > 0 else {
            throw .malformedResponse("the pushed authorization request's answer has no positive expires_in")
        }
        requestURI = uri
        self.expiresIn = expiresIn
    }
}
