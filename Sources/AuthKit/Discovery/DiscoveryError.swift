/// Why a provider's discovery document could not be used.
public enum DiscoveryError: Error, Sendable, Equatable, CustomStringConvertible {
    case transport(HTTPError)
    case httpStatus(Int, url: String)
    case malformedDocument(String)
    case issuerMismatch(expected: String, found: String)
    case insecureEndpoint(EndpointPolicy.Violation)
    case unsupported(String)
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
