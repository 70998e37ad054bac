import JOSE
import SecretStore

/// Everything that can go wrong in AuthKit's high-level API (``SharedSession``,
/// ``SignInFlow``), with a message a person can act on and a ``category`` a program can act on.
///
/// No case carries a token, code, verifier or secret; text from providers is cleaned.
public enum AuthKitError: Error, Sendable, CustomStringConvertible {
    /// A setting (flag, environment variable, config file) is missing or wrong; nothing was attempted.
    case configuration(ConfigurationError)
    /// Nobody is signed in in the group (or with the requested account).
    case notSignedIn(group: String, account: String?)
    /// The sign-in exists but cannot give a token any more (no refresh token, refresh token
    /// rejected): a new login is needed. The stored sign-in is left in place.
    case loginRequired(account: String, reason: String)
    /// The token store could not be used (no session bus, locked keyring, blocked kernel keyring …).
    case storage(SecretStoreError)
    /// The provider rotated the refresh token and the store refused the new record. With
    /// `keptPending`, it waits in the kernel keyring and the next refresh puts
    /// it back into the store; without, it could not be kept anywhere and a new login is needed.
    case rotationNotSaved(SecretStoreError, keptPending: Bool)
    /// A stored record that authkit cannot read; it is reported and left in place.
    case corruptRecord(account: String, reason: String)
    /// The group's refresh lock could not be taken (its directory, its file, or a timeout).
    case lock(RefreshLock.Failure)
    /// The provider's discovery document could not be fetched or was refused.
    case discovery(DiscoveryError)
    /// The browser part of a sign-in failed: the callback, its `state`, the provider's error, the wait.
    case authorization(AuthorizationError)
    /// The device-code sign-in (RFC 8628) failed: denied, expired, or the provider's error.
    case device(DeviceFlowError)
    /// The token endpoint refused or failed a request (code exchange or refresh).
    case tokenEndpoint(TokenEndpointError)
    /// The provider's keys could not be fetched.
    case keys(JWKSError)
    /// An id_token failed validation.
    case idToken(JOSEError)
    /// The provider answered without an id_token although `openid` was requested.
    case missingIDToken
    /// A refresh answer names another issuer or subject than the sign-in (OIDC Core §12.2):
    /// nothing of it was kept, and its refresh token was revoked where the provider allows.
    case identityChanged(revokedNewRefreshToken: Bool)
    /// A refreshed id_token failed an OIDC Core §12.2 rule (older `iat`, changed `auth_time`,
    /// another `nonce`): nothing was handed out; the new refresh token is kept and the next
    /// request refreshes again.
    case refreshRejected(String)
    /// A Microsoft Graph request failed.
    case graph(GraphError)
    /// The provider does not accept this client (`invalid_client`, RFC 6749 §5.2; Entra's
    /// AADSTS700016, "application not found"): a configuration problem, known before the
    /// browser opens. Carries the provider's (cleaned) description.
    case clientRejected(clientID: String, code: String, description: String?)
    /// The request needs something the stored sign-in lacks (e.g. no Graph URL configured).
    case unsupported(String)
    /// A sign-in bound to a key (DPoP) could not make or use its proof.
    case dpop(DPoPError)
    /// A request to a resource server (``SharedSession/send(_:account:scopes:resources:)``) got no answer.
    case http(HTTPError)
    /// A narrower token (fewer scopes, a resource) was asked for and the provider's answer is
    /// not as narrow: nothing was handed out. Says which narrowing the provider would not do.
    case notNarrowed(String)
    /// The authkit agent (`AUTHKIT_AGENT_SOCK`) answered with a failure: its sentence, hint and
    /// category are those of the error it met reading the sign-in.
    case agent(AgentError)

    /// How a program (the `authkit` command's exit status) should treat the error.
    public enum Category: Sendable, Equatable {
        /// Usage or configuration: nothing was attempted (exit 2).
        case usage
        /// Not signed in, or a new login is needed (exit 1).
        case loginNeeded
        /// The token store is unavailable (exit 3).
        case storage
        /// The provider, the network or Graph failed (exit 4).
        case provider
        /// The provider rejected the configuration: an unknown client, a wrong secret (exit 7).
        case configurationRejected
        /// The agent refused: its socket does not serve that, a group's rules do not allow the
        /// asker, or a person said no (exit 10).
        case refused
    }

    /// What kind of failure this is, for an exit code or a retry decision.
    public var category: Category {
        switch self {
        case .configuration, .unsupported:
            return .usage
        case .agent(let error):
            return error.category
        case .clientRejected:
            return .configurationRejected
        case .notSignedIn, .loginRequired, .identityChanged:
            return .loginNeeded
        case .dpop(let error):
            switch error {
            case .keyMissing, .keyMismatch: return .loginNeeded
            case .notOffered: return .configurationRejected
            case .invalidRequest: return .usage
            case .keyUnavailable: return .storage
            case .proofRefused: return .provider
            }
        case .authorization(let error):
            switch error {
            case .timedOut, .noCallback, .cancelled, .stateMismatch, .missingState: return .loginNeeded
            // The person declined (RFC 6749 §4.1.2.1): not signed in, as with a denied device code.
            case .providerError(let code, _, _) where code == "access_denied": return .loginNeeded
            // The provider says this client may not sign in this way (RFC 6749 §4.1.2.1): the
            // app registration or authkit's settings need fixing, not the network.
            case .providerError(let code, _, _) where code == "unauthorized_client" || code == "unsupported_response_type":
                return .configurationRejected
            case .invalidRequest: return .usage
            default: return .provider
            }
        case .device(let error):
            switch error {
            case .expired, .denied, .timedOut, .cancelled: return .loginNeeded
            default: return .provider
            }
        case .storage(let error):
            switch error {
            case .invalidGroup, .invalidKey: return .usage
            default: return .storage
            }
        case .corruptRecord, .lock, .rotationNotSaved:
            return .storage
        case .graph(let error):
            switch error {
            case .unauthorized, .forbidden: return .loginNeeded
            case .invalidQuery: return .usage
            default: return .provider
            }
        case .tokenEndpoint(let error):
            return error.isInvalidGrant ? .loginNeeded : .provider
        case .discovery(let error):
            switch error {
            // The provider answered, and the issuer authkit was told does not name it: a
            // setting to fix (a trailing slash, the tenant), not an outage to wait out.
            case .issuerMismatch, .invalidIssuer: return .configurationRejected
            default: return .provider
            }
        case .keys, .idToken, .missingIDToken, .refreshRejected, .http, .notNarrowed:
            return .provider
        }
    }

    public var description: String {
        switch self {
        case .configuration(let error):
            return error.description
        case .notSignedIn(let group, let account):
            if let account { return "‘\(account)’ is not signed in in the group \(group)" }
            return "nobody is signed in in the group \(group)"
        case .loginRequired(let account, let reason):
            return "\(account) must sign in again: \(reason)"
        case .storage(let error):
            return error.description
        case .rotationNotSaved(let error, let kept):
            return "the provider renewed the sign-in but the token store did not save it (\(error.summary)); "
                + (kept
                    ? "the new refresh token waits in the kernel keyring and the next command saves it once the store works again"
                    : "it could not be kept anywhere else either, so the sign-in must be made again once the store works")
        case .corruptRecord(let account, let reason):
            return "the stored sign-in of \(account) cannot be read (\(reason)); it was left in place — "
                + "sign in again to replace it, or remove it with `authkit logout --account \(account)`"
        case .lock(let error):
            return error.description
        case .discovery(let error):
            return error.description
        case .authorization(let error):
            return error.description
        case .device(let error):
            return error.description
        case .tokenEndpoint(let error):
            return error.description
        case .keys(let error):
            return error.description
        case .idToken(let error):
            return "the provider's id_token was rejected: \(error)"
        case .missingIDToken:
            return "the provider returned no id_token although `openid` was requested; authkit signs in only with a verified id_token"
        case .identityChanged(let revoked):
            return "the provider answered the refresh for another user than the one signed in (OpenID Connect Core §12.2); "
                + "nothing of its answer was kept" + (revoked ? " and its new refresh token was revoked" : "")
                + " — sign in again if you meant to switch users"
        case .refreshRejected(let reason):
            return
                "the provider's refreshed sign-in was not used: \(reason); its new refresh token is kept and the next request tries again"
        case .graph(let error):
            return error.description
        case .clientRejected:
            return "\(summary); \(hint ?? "")"
        case .unsupported(let reason):
            return reason
        case .dpop(let error):
            return error.description
        case .http(let error):
            return error.description
        case .notNarrowed(let reason):
            return "no narrower token: \(reason); nothing was handed out"
        case .agent(let error):
            return error.description
        }
    }

    /// What went wrong in one clause, for a one-line report (`authkit: SUMMARY`): the same as
    /// ``description`` except where the error carries a separate ``hint`` or long library text
    /// (the token store's), which ``description`` keeps in full.
    public var summary: String {
        switch self {
        case .storage(let error):
            return error.summary
        case .clientRejected(let clientID, let code, let description):
            return "the provider does not accept the client id ‘\(clientID)’ (\(code)\(description.map { ": \($0)" } ?? ""))"
        case .authorization(.noCallback(let seconds, _, _)):
            return "no sign-in came back within \(AuthorizationError.duration(seconds))"
        default:
            return description
        }
    }

    /// What the user can do about it, when that is said apart from ``summary`` (`hint: …`).
    public var hint: String? {
        switch self {
        case .storage(let error), .rotationNotSaved(let error, true):
            return error.hint
        case .rotationNotSaved(let error, false):
            return (error.hint.map { $0 + "; then " } ?? "") + "authkit login"
        case .agent(let error):
            return error.hint
        case .clientRejected:
            return "check --client-id and, for a confidential client, its secret: the provider's app registration must list this client"
        case .authorization(.noCallback(_, let clientID, let redirectURI)):
            return "if the browser showed an error, check that the provider knows the client id ‘\(clientID)’ and accepts "
                + "the redirect URI \(redirectURI) (a loopback URI, any port); on another machine use --paste or --device-code"
        default:
            return nil
        }
    }
}
