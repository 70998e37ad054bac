#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// An OAuth 2.0 authorization request for the code flow with PKCE, `state` and OpenID
/// Connect `nonce` (RFC 6749 §4.1.1, RFC 7636 §4.3, OIDC Core §3.1.2.1), as a value.
///
/// `state` and `nonce` each carry 256 bits from the system CSPRNG. The request's
/// ``description`` omits them and the verifier; ``url`` is what the browser opens.
package struct AuthorizationRequest: Sendable, CustomStringConvertible {
    package let authorizationEndpoint: URL
    package let clientID: String
    package let redirectURI: String
    package let scopes: [String]
    package let state: String
    package let nonce: String
    package let verifier: PKCEVerifier
    package let loginHint: String?
    package let prompt: String?
    package let domainHint: String?
    /// More parameters a provider wants (e.g. `access_type`); they cannot override the ones above.
    package let additionalParameters: [(name: String, value: String)]
    /// The thumbprint of the DPoP key the code is to be bound to (`dpop_jkt`, RFC 9449 §10).
    package let dpopThumbprint: String?
    /// The APIs later tokens may be narrowed to (RFC 8707 §2.1: `resource`, repeated).
    package let resources: [String]

    package init(
        authorizationEndpoint: URL,
        clientID: String,
        redirectURI: String,
        scopes: [String],
        loginHint: String? = nil,
        prompt: String? = nil,
        domainHint: String? = nil,
        additionalParameters: [(name: String, value: String)] = [],
        dpopThumbprint: String? = nil,
        resources: [String] = []
    ) throws(AuthorizationError) {
        guard !clientID.isEmpty else { throw .invalidRequest("the client id is empty") }
        guard !scopes.isEmpty else { throw .invalidRequest("no scopes") }
        if let bad = scopes.first(where: { $0.isEmpty || $0.contains(" ") || $0.contains("\"") || $0.contains("\\") }) {
            throw .invalidRequest("the scope ‘\(bad)’ is not a valid scope token (RFC 6749 §3.3)")
        }
        let reserved: Set<String> = [
            "response_type", "client_id", "redirect_uri", "scope", "state", "nonce",
            "code_challenge", "code_challenge_method", "login_hint", "prompt", "domain_hint", "dpop_jkt", "request_uri", "resource",
        ]
        if let clash = additionalParameters.first(where: { reserved.contains($0.name) }) {
            throw .invalidRequest("the additional parameter ‘\(clash.name)’ would override one authkit sets")
        }
        self.authorizationEndpoint = authorizationEndpoint
        self.clientID = clientID
        self.redirectURI = redirectURI
        self.scopes = scopes
        self.loginHint = loginHint
        self.prompt = prompt
        self.domainHint = domainHint
        self.additionalParameters = additionalParameters
        self.dpopThumbprint = dpopThumbprint
        self.resources = resources
        do {
            state = try SecureRandom.token()
            nonce = try SecureRandom.token()
        } catch {
            throw .randomUnavailable(error.description)
        }
        verifier = try PKCEVerifier()
    }

    /// The parameters, in the order they appear in the URL.
    package var parameters: [(name: String, value: String)] {
        var fields: [(name: String, value: String)] = [
            ("response_type", "code"),
            ("client_id", clientID),
            ("redirect_uri", redirectURI),
            ("scope", scopes.joined(separator: " ")),
            ("state", state),
            ("nonce", nonce),
            ("code_challenge", verifier.challenge),
            ("code_challenge_method", verifier.challengeMethod),
        ]
        if let loginHint, !loginHint.isEmpty { fields.append(("login_hint", loginHint)) }
        if let prompt, !prompt.isEmpty { fields.append(("prompt", prompt)) }
        if let domainHint, !domainHint.isEmpty { fields.append(("domain_hint", domainHint)) }
        if let dpopThumbprint { fields.append(("dpop_jkt", dpopThumbprint)) }
        for resource in resources { fields.append(("resource", resource)) }
        fields.append(contentsOf: additionalParameters)
        return fields
    }

    /// The URL to open for this request once pushed (RFC 9126 §4): only `client_id` and the
    /// `request_uri` the provider gave.
    package func pushedURL(requestURI: String) -> URL {
        url(with: [("client_id", clientID), ("request_uri", requestURI)])
    }

    /// The URL to open in the browser: the endpoint (keeping any query it already has) with
    /// the parameters appended, each percent-encoded as an RFC 3986 query component.
    package var url: URL { url(with: parameters) }

    private func url(with parameters: [(name: String, value: String)]) -> URL {
        let query = parameters.map { "\(QueryEncoding.escape($0.name))=\(QueryEncoding.escape($0.value))" }
            .joined(separator: "&")
        var text = authorizationEndpoint.absoluteString
        if let hash = text.firstIndex(of: "#") { text = String(text[..<hash]) }
        text += (authorizationEndpoint.query?.isEmpty == false ? "&" : (text.hasSuffix("?") ? "" : "?")) + query
        // Every component is escaped and the endpoint was a valid URL, so this parses.
        return URL(string: text) ?? authorizationEndpoint
    }

    package var description: String {
        "AuthorizationRequest(\(authorizationEndpoint.redactedOrigin)\(authorizationEndpoint.path(percentEncoded: true)), client \(clientID), "
            + "scopes \(scopes.joined(separator: " ")), redirect \(redirectURI))"
    }
}

/// RFC 3986 query-component encoding: unreserved characters stay, everything else is
/// percent-encoded (a space is `%20`, never `+`, which some providers read literally).
enum QueryEncoding {
    static func escape(_ text: String) -> String {
        var out = [UInt8]()
        out.reserveCapacity(text.utf8.count)
        let hex = Array("0123456789ABCDEF".utf8)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."),
                UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.append(byte)
            default:
                out.append(UInt8(ascii: "%"))
                out.append(hex[Int(byte >> 4)])
                out.append(hex[Int(byte & 0x0F)])
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
