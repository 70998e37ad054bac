/// Why the browser part of a sign-in (authorization request and callback) failed.
///
/// Messages never contain the authorization code, the PKCE verifier, `state` or `nonce`.
/// Text that came from the provider (`error_description`) is cleaned of control characters.
public enum AuthorizationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No secure random bytes for `state`, `nonce` or the PKCE verifier.
    case randomUnavailable(String)
    /// The authorization request cannot be built from the settings.
    case invalidRequest(String)
    /// The loopback redirect listener could not be started.
    case cannotListen(String)
    /// No valid callback arrived in time.
    case timedOut(seconds: Int)
    /// The browser sign-in's wait ran out: the message names the likely causes a person can
    /// check — a client id the provider does not know, or a redirect URI not registered for it
    /// (both end at an error page in the browser, which never comes back to authkit).
    case noCallback(seconds: Int, clientID: String, redirectURI: String)
    /// The callback carried no `state`.
    case missingState
    /// The callback's `state` is not the one this sign-in sent (a forged or stale callback).
    case stateMismatch
    /// A parameter appeared more than once (RFC 6749 §3.1 forbids it).
    case duplicateParameter(String)
    /// The callback had neither `code` nor `error`, or was not a URL.
    case malformedCallback(String)
    /// The callback's `iss` (RFC 9207) is not the provider's issuer: a mix-up attack, or the
    /// wrong provider answered.
    case issuerMismatch(expected: String)
    /// The provider promises `iss` in every authorization response, and this one had none.
    case missingIssuer(expected: String)
    /// The provider answered the authorization request with an error (RFC 6749 §4.1.2.1).
    case providerError(code: String, description: String?, uri: String?)
    /// The sign-in was cancelled (the task was cancelled, or the receiver closed).
    case cancelled
    /// The pushed authorization request (RFC 9126) got no `request_uri`: the network, or an
    /// answer that is not one.
    case pushFailed(String)
    /// The sign-in's start link was opened a second time: another local process may have read
    /// it from the browser's command line.
    case startOpenedTwice
    /// A callback from another browser than the one the start link went to (without its cookie).
    case otherBrowser

    public var description: String {
        switch self {
        case .randomUnavailable(let detail):
            return detail
        case .invalidRequest(let detail):
            return "cannot build the authorization request: \(detail)"
        case .cannotListen(let detail):
            return "cannot listen for the browser's redirect on 127.0.0.1: \(detail)"
        case .timedOut(let seconds):
            return "no sign-in completed within \(Self.duration(seconds)); run the login again "
                + "(use --paste if the browser runs on another machine, or --device-code)"
        case .noCallback(let seconds, let clientID, let redirectURI):
            return "no sign-in came back within \(Self.duration(seconds)); if the browser showed an error, check that the "
                + "provider knows the client id ‘\(clientID)’ and accepts the redirect URI \(redirectURI) "
                + "(registered as a loopback URI, any port); run the login again, with --paste or --device-code "
                + "if the browser runs on another machine"
        case .missingState:
            return "the sign-in callback carried no state parameter; it was not an answer to this sign-in"
        case .stateMismatch:
            return "the sign-in callback's state does not match this sign-in (a stale or forged callback); "
                + "start the login again"
        case .duplicateParameter(let name):
            // Any local user can send the loopback receiver a request: its names are outside text.
            return "the sign-in callback repeats the parameter ‘\(ProviderText.clean(name, limit: 40) ?? "?")’"
        case .malformedCallback(let detail):
            return "the sign-in callback is malformed: \(detail)"
        case .issuerMismatch(let expected):
            return "the sign-in callback comes from a different issuer than \(expected) (RFC 9207); "
                + "it was refused"
        case .missingIssuer(let expected):
            return "the sign-in callback lacks the iss parameter that \(expected) promises (RFC 9207); "
                + "it was refused"
        case .providerError(let code, let description, let uri):
            var text = "the provider refused the sign-in: \(code)"
            if let description, !description.isEmpty { text += ": \(description)" }
            if let uri, !uri.isEmpty { text += " (see \(uri))" }
            return text
        case .cancelled:
            return "the sign-in was cancelled"
        case .pushFailed(let detail):
            return "the provider did not take the pushed authorization request (RFC 9126): \(detail)"
        case .startOpenedTwice:
            return "the sign-in link was opened twice, so the sign-in was stopped: another local user may be reading "
                + "command lines (mount /proc with hidepid=2, or sign in with --no-browser); run the login again"
        case .otherBrowser:
            return "a sign-in callback came from another browser than the one authkit opened; it was refused"
        }
    }

    static func duration(_ seconds: Int) -> String {
        seconds % 60 == 0 && seconds >= 60 ? "\(seconds / 60) min" : "\(seconds) s"
    }
}
