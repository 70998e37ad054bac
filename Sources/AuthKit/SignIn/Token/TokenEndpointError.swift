/// Why the token endpoint gave no tokens. Provider text is cleaned for the terminal;
/// nothing here contains a code, verifier, token or secret.
public enum TokenEndpointError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The request could not be sent or answered (network, TLS, timeout).
    case transport(HTTPError)
    /// An error response (RFC 6749 §5.2): `invalid_grant`, `invalid_client` …
    case oauth(code: String, description: String?, status: Int)
    /// An HTTP error status without an OAuth error body.
    case httpStatus(Int)
    /// The answer is not a valid token response (RFC 6749 §5.1), said without its values.
    case malformedResponse(String)
    /// The access token is neither a bearer nor a DPoP token.
    case unsupportedTokenType(String)
    /// The provider answered another `token_type` than the request asked for: `DPoP` to a
    /// request without proof, or `Bearer` to one with a proof (RFC 9449 §5).
    case tokenTypeMismatch(asked: String, answered: String)
    /// A DPoP proof could not be made.
    case proof(DPoPError)

    /// The grant (code or refresh token) is invalid, expired, revoked or already used.
    public var isInvalidGrant: Bool {
        if case .oauth("invalid_grant", _, _) = self { return true }
        return false
    }

    public var description: String {
        switch self {
        case .transport(let error):
            return "cannot reach the token endpoint: \(error)"
        case .oauth(let code, let description, let status):
            var text = "the token endpoint refused the request (HTTP \(status)): \(code)"
            if let description { text += ": \(description)" }
            switch code {
            case "invalid_client":
                text += " — check the client id (and the client secret, if the provider needs one)"
            case "invalid_grant":
                text += " — the sign-in is no longer valid; run `authkit login`"
            case "invalid_dpop_proof":
                text += " — the provider refused authkit's DPoP proof; check that this machine's clock is right"
            case "use_dpop_nonce":
                text += " — the provider asked for a new DPoP nonce again after authkit sent the one it gave"
            default:
                break
            }
            return text
        case .httpStatus(let status):
            return "the token endpoint answered HTTP \(status) without an OAuth error"
        case .malformedResponse(let reason):
            return "the token endpoint's answer is malformed: \(reason)"
        case .unsupportedTokenType(let type):
            return "the provider issued a ‘\(type)’ token; authkit supports Bearer and DPoP tokens only"
        case .tokenTypeMismatch(let asked, let answered):
            return asked == "DPoP"
                ? "the provider answered a request made with a DPoP proof with a \(answered) token (RFC 9449 §5: a bound token was asked for); "
                    + "nothing was kept — sign in with --dpop never if the provider does not bind tokens"
                : "the provider answered a request without DPoP proof with a \(answered) token, which authkit cannot use unasked; nothing was kept"
        case .proof(let error):
            return error.description
        }
    }

    /// Parses an RFC 6749 §5.2 error body; nil when the body is not one.
    static func oauthError(body: [UInt8], status: Int) -> TokenEndpointError? {
        struct Raw: Decodable {
            var error: String?
            var error_description: String?
        }
        // Not an OAuth error body (HTML from a proxy, a duplicate member): the status is reported.
        guard let raw = try? JSONDocument.tokenError.decode(Raw.self, from: body),
            let code = ProviderText.clean(raw.error, limit: 100)
        else { return nil }
        return .oauth(code: code, description: ProviderText.clean(raw.error_description), status: status)
    }
}

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
