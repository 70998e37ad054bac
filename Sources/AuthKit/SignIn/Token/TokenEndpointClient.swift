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

    /// Uses a refresh token. `scopes` narrows the request (nil: the original grant's scopes).
    package func refresh(_ refreshToken: String, scopes: [String]? = nil) async throws(TokenEndpointError) -> TokenResponse {
        var fields: [(name: String, value: String)] = [("grant_type", "refresh_token"), ("refresh_token", refreshToken)]
        if let scopes, !scopes.isEmpty { fields.append(("scope", scopes.joined(separator: " "))) }
        return try await request(fields)
    }

    /// Sends a token request with client authentication and returns the tokens.
    func request(_ fields: [(name: String, value: String)]) async throws(TokenEndpointError) -> TokenResponse {
        let response = try await post(fields)
        guard response.status == 200 else {
            throw TokenEndpointError.oauthError(body: response.body, status: response.status) ?? .httpStatus(response.status)
        }
        return try TokenResponse(body: response.body, receivedAt: clock())
    }

    /// One form POST to the endpoint, retried once if it never reached the server.
    func post(_ fields: [(name: String, value: String)], to url: URL? = nil) async throws(TokenEndpointError) -> HTTPResponse {
        var fields = fields
        var headers = HTTPHeaders()
        client.authenticate(fields: &fields, headers: &headers, supportedMethods: authMethodsSupported)
        let request = HTTPRequest.form(
            url ?? endpoint, fields: fields, headers: headers, timeout: timeout, maxResponseBytes: maxResponseBytes)
        do {
            return try await transport.send(request)
        } catch  where error.isSafeToRetry {
            try? await Task.sleep(for: retryDelay)
            do {
                return try await transport.send(request)
            } catch {
                throw .transport(error)
            }
        } catch {
            throw .transport(error)
        }
    }
}
