#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What authkit needs from an OpenID provider's discovery document (OpenID Connect
/// Discovery 1.0 §3), checked: issuer as configured, every endpoint https (or loopback),
/// authorization code flow and PKCE S256 not ruled out.
package struct ProviderMetadata: Sendable, Equatable, Codable {
    package var issuer: String
    package var authorizationEndpoint: URL
    package var tokenEndpoint: URL
    package var jwksURI: URL
    package var userinfoEndpoint: URL?
    package var revocationEndpoint: URL?
    package var deviceAuthorizationEndpoint: URL?
    package var endSessionEndpoint: URL?
    package var scopesSupported: [String]?
    package var idTokenSigningAlgValuesSupported: [String]?
    package var tokenEndpointAuthMethodsSupported: [String]?
    /// RFC 9207: the provider puts `iss` in every authorization response.
    package var authorizationResponseIssParameterSupported: Bool
    /// RFC 9449 §5.1: the JWS algorithms the provider takes in DPoP proofs (nil: it does not say).
    package var dpopSigningAlgValuesSupported: [String]? = nil
    /// RFC 9126 §5: where authorization requests are pushed.
    package var pushedAuthorizationRequestEndpoint: URL? = nil
    /// RFC 9126 §5: the provider takes authorization requests only pushed.
    package var requirePushedAuthorizationRequests = false
    /// The grant types the provider lists (`grant_types_supported`), if it lists them.
    package var grantTypesSupported: [String]? = nil

    package init(
        issuer: String, authorizationEndpoint: URL, tokenEndpoint: URL, jwksURI: URL,
        userinfoEndpoint: URL? = nil, revocationEndpoint: URL? = nil, deviceAuthorizationEndpoint: URL? = nil,
        endSessionEndpoint: URL? = nil, scopesSupported: [String]? = nil,
        idTokenSigningAlgValuesSupported: [String]? = nil, tokenEndpointAuthMethodsSupported: [String]? = nil,
        authorizationResponseIssParameterSupported: Bool = false
    ) {
        self.issuer = issuer
        self.authorizationEndpoint = authorizationEndpoint
        self.tokenEndpoint = tokenEndpoint
        self.jwksURI = jwksURI
        self.userinfoEndpoint = userinfoEndpoint
        self.revocationEndpoint = revocationEndpoint
        self.deviceAuthorizationEndpoint = deviceAuthorizationEndpoint
        self.endSessionEndpoint = endSessionEndpoint
        self.scopesSupported = scopesSupported
        self.idTokenSigningAlgValuesSupported = idTokenSigningAlgValuesSupported
        self.tokenEndpointAuthMethodsSupported = tokenEndpointAuthMethodsSupported
        self.authorizationResponseIssParameterSupported = authorizationResponseIssParameterSupported
    }

    /// Parses and checks a discovery document for the configured issuer (which may be a
    /// `{tenantid}` template: then the document must publish that same template).
    package init(document: [UInt8], expectedIssuer: String) throws(DiscoveryError) {
        let raw: RawDocument
        do throws(JSONDocumentError) {
            raw = try JSONDocument.discovery.decode(RawDocument.self, from: document)
        } catch {
            throw .malformedDocument(error.reason)
        }
        guard let issuer = raw.issuer, !issuer.isEmpty else { throw .malformedDocument("it has no issuer") }
        guard issuer == expectedIssuer else { throw .issuerMismatch(expected: expectedIssuer, found: issuer) }
        if let types = raw.response_types_supported, !types.contains("code") {
            throw .unsupported("the provider does not offer the authorization code flow (response_types_supported)")
        }
        if let methods = raw.code_challenge_methods_supported, !methods.contains("S256") {
            throw .unsupported("the provider does not offer PKCE with S256 (code_challenge_methods_supported)")
        }
        func endpoint(_ value: String?, _ name: String) throws(DiscoveryError) -> URL {
            guard let value else { throw .malformedDocument("it has no \(name)") }
            do { return try EndpointPolicy.check(value, name: name) } catch { throw .insecureEndpoint(error) }
        }
        func optionalEndpoint(_ value: String?, _ name: String) throws(DiscoveryError) -> URL? {
            guard let value else { return nil }
            return try endpoint(value, name)
        }
        self.init(
            issuer: issuer,
            authorizationEndpoint: try endpoint(raw.authorization_endpoint, "authorization_endpoint"),
            tokenEndpoint: try endpoint(raw.token_endpoint, "token_endpoint"),
            jwksURI: try endpoint(raw.jwks_uri, "jwks_uri"),
            userinfoEndpoint: try optionalEndpoint(raw.userinfo_endpoint, "userinfo_endpoint"),
            revocationEndpoint: try optionalEndpoint(raw.revocation_endpoint, "revocation_endpoint"),
            deviceAuthorizationEndpoint: try optionalEndpoint(raw.device_authorization_endpoint, "device_authorization_endpoint"),
            endSessionEndpoint: try optionalEndpoint(raw.end_session_endpoint, "end_session_endpoint"),
            scopesSupported: raw.scopes_supported,
            idTokenSigningAlgValuesSupported: raw.id_token_signing_alg_values_supported,
            tokenEndpointAuthMethodsSupported: raw.token_endpoint_auth_methods_supported,
            authorizationResponseIssParameterSupported: raw.authorization_response_iss_parameter_supported ?? false)
        dpopSigningAlgValuesSupported = raw.dpop_signing_alg_values_supported
        pushedAuthorizationRequestEndpoint = try optionalEndpoint(
            raw.pushed_authorization_request_endpoint, "pushed_authorization_request_endpoint")
        requirePushedAuthorizationRequests = raw.require_pushed_authorization_requests ?? false
        grantTypesSupported = raw.grant_types_supported
        if requirePushedAuthorizationRequests, pushedAuthorizationRequestEndpoint == nil {
            throw .malformedDocument("it requires pushed authorization requests but names no pushed_authorization_request_endpoint")
        }
    }

    /// The document's fields as published (snake case), all optional so that a missing one
    /// is reported by name rather than as a decoding failure.
    private struct RawDocument: Decodable {
        var issuer: String?
        var authorization_endpoint: String?
        var token_endpoint: String?
        var jwks_uri: String?
        var userinfo_endpoint: String?
        var revocation_endpoint: String?
        var device_authorization_endpoint: String?
        var end_session_endpoint: String?
        var scopes_supported: [String]?
        var response_types_supported: [String]?
        var code_challenge_methods_supported: [String]?
        var id_token_signing_alg_values_supported: [String]?
        var token_endpoint_auth_methods_supported: [String]?
        var authorization_response_iss_parameter_supported: Bool?
        var dpop_signing_alg_values_supported: [String]?
        var pushed_authorization_request_endpoint: String?
        var require_pushed_authorization_requests: Bool?
        var grant_types_supported: [String]?
    }

}
