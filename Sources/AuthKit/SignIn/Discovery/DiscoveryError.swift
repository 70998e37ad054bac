/// Why a provider's discovery document could not be used.
public enum DiscoveryError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The document could not be fetched (network, TLS, timeout).
    case transport(HTTPError)
    /// The provider answered with an HTTP error status.
    case httpStatus(Int, url: String)
    /// The document is not valid JSON or lacks a required member.
    case malformedDocument(String)
    /// The document names another issuer than the one asked for (OpenID Connect Discovery §4.3).
    case issuerMismatch(expected: String, found: String)
    /// An endpoint in the document is not https (or loopback http).
    case insecureEndpoint(EndpointPolicy.Violation)
    /// The provider lacks something authkit needs (e.g. S256 PKCE, the code flow).
    case unsupported(String)
    /// The configured issuer is not a URL authkit can use.
    case invalidIssuer(String)

    public var description: String {
        switch self {
        case .transport(let error):
            return "cannot fetch the provider's discovery document: \(error)"
        case .httpStatus(let status, let url):
            return "the discovery document at \(url) answered HTTP \(status); check the issuer URL"
        case .malformedDocument(let reason):
            return "the provider's discovery document is malformed: \(reason)"
        case .issuerMismatch(let expected, let found):
            return "the discovery document names the issuer \(ProviderText.clean(found, limit: 200) ?? "?"), "
                + "not the configured \(expected); check the issuer URL (trailing slash, tenant, http vs https)"
        case .insecureEndpoint(let violation):
            return "the provider's discovery document is refused: \(violation)"
        case .unsupported(let reason):
            return reason
        case .invalidIssuer(let reason):
            return "invalid issuer: \(reason)"
        }
    }
}
