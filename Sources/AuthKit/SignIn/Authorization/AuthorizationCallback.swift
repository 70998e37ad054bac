#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The parameters of an authorization response (RFC 6749 §4.1.2 and §4.1.2.1, RFC 9207),
/// as the loopback receiver or a pasted URL delivers them. Parsing only: whether it answers
/// *this* sign-in is decided by ``CallbackExpectation``.
///
/// The code is a secret: the description shows which parameters were present, not values.
package struct AuthorizationCallback: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    package let code: String?
    package let state: String?
    package let issuer: String?
    package let error: String?
    package let errorDescription: String?
    package let errorURI: String?
    /// The path the callback was sent to (the pasted URL's or the HTTP request's).
    package let path: String?

    /// Parses a query string (`code=…&state=…`). A parameter given twice is an error
    /// (RFC 6749 §3.1), and so is invalid percent-encoding.
    package init(query: some StringProtocol, path: String? = nil) throws(AuthorizationError) {
        guard let fields = FormEncoding.decode(query) else {
            throw .malformedCallback("invalid percent-encoding")
        }
        var values: [String: String] = [:]
        for field in fields {
            guard values[field.name] == nil else { throw .duplicateParameter(field.name) }
            values[field.name] = field.value
        }
        code = values["code"]
        state = values["state"]
        issuer = values["iss"]
        error = values["error"]
        errorDescription = ProviderText.clean(values["error_description"])
        errorURI = ProviderText.clean(values["error_uri"])
        self.path = path
    }

    /// Parses what a person pasted: the full URL the browser ended on (the usual case), or
    /// just its query. Surrounding whitespace and quotes are ignored; a fragment is not
    /// read (the code flow answers in the query).
    package init(pasted text: String) throws(AuthorizationError) {
        var input = text.trimmingASCIIWhitespace()
        if input.count >= 2, let first = input.first, let last = input.last,
            (first == "\"" && last == "\"") || (first == "'" && last == "'")
        {
            input = String(input.dropFirst().dropLast())
        }
        guard !input.isEmpty else { throw .malformedCallback("nothing was pasted") }
        if let hash = input.firstIndex(of: "#") { input = String(input[..<hash]) }
        if input.contains("://") {
            guard let url = URL(string: input), url.scheme != nil else {
                throw .malformedCallback("that is not a URL")
            }
            guard let query = url.query, !query.isEmpty else {
                throw .malformedCallback("the URL has no query (paste the whole address, including ?code=…)")
            }
            try self.init(query: query, path: url.path.isEmpty ? "/" : url.path)
        } else {
            let query = input.hasPrefix("?") ? String(input.dropFirst()) : input
            guard query.contains("=") else { throw .malformedCallback("that is not a URL or query") }
            try self.init(query: query)
        }
    }

    package var description: String {
        var present: [String] = []
        if code != nil { present.append("code") }
        if state != nil { present.append("state") }
        if issuer != nil { present.append("iss") }
        if let error { present.append("error=\(error)") }
        return "AuthorizationCallback(\(present.joined(separator: ", ")))"
    }
    package var debugDescription: String { description }
    package var customMirror: Mirror {
        Mirror(self, children: ["hasCode": code != nil, "issuer": issuer as Any, "error": error as Any, "path": path as Any])
    }
}

/// A validated authorization code, ready for the token request. The code is a secret.
package struct AuthorizationGrant: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    package let code: String
    /// The `iss` the callback carried, when it carried one.
    package let issuer: String?

    package var description: String { "AuthorizationGrant(code redacted)" }
    package var debugDescription: String { description }
    package var customMirror: Mirror { Mirror(self, children: ["issuer": issuer as Any]) }
}

/// What the callback for one sign-in must look like: its `state`, and its `iss` when the
/// provider sends one (RFC 9207).
package struct CallbackExpectation: Sendable {
    package enum Verdict: Sendable {
        /// The genuine callback with a code.
        case accepted(AuthorizationGrant)
        /// Not an answer to this sign-in (no or wrong `state`): refuse it and keep waiting.
        case ignored(AuthorizationError)
        /// The answer to this sign-in, and it ends it with an error.
        case failed(AuthorizationError)
    }

    package let state: String
    /// The issuer identifier from discovery; may be a `{tenantid}` template.
    package let issuer: String
    /// True when discovery advertises `authorization_response_iss_parameter_supported`.
    package let issuerRequired: Bool

    package init(state: String, issuer: String, issuerRequired: Bool) {
        self.state = state
        self.issuer = issuer
        self.issuerRequired = issuerRequired
    }

    package func evaluate(_ callback: AuthorizationCallback) -> Verdict {
        guard let received = callback.state, !received.isEmpty else { return .ignored(.missingState) }
        guard ConstantTime.equals(received, state) else { return .ignored(.stateMismatch) }
        // RFC 9207 §2.4: check iss before anything else in the response, errors included.
        if let iss = callback.issuer {
            guard IssuerMatcher.matches(iss, expected: issuer) else { return .failed(.issuerMismatch(expected: issuer)) }
        } else if issuerRequired {
            return .failed(.missingIssuer(expected: issuer))
        }
        if let error = callback.error {
            let code = ProviderText.clean(error, limit: 100) ?? "error"
            return .failed(.providerError(code: code, description: callback.errorDescription, uri: callback.errorURI))
        }
        guard let code = callback.code, !code.isEmpty else {
            return .failed(.malformedCallback("it has neither a code nor an error"))
        }
        return .accepted(AuthorizationGrant(code: code, issuer: callback.issuer))
    }
}

/// Issuer comparison: exact, or against a template whose `{tenantid}` stands for one
/// path-safe segment (Microsoft's `common`, `organizations` and `consumers` endpoints
/// publish `https://login.microsoftonline.com/{tenantid}/v2.0`).
enum IssuerMatcher {
    static let placeholder = "{tenantid}"

    static func matches(_ candidate: String, expected: String) -> Bool {
        guard let range = expected.firstRange(of: placeholder) else { return candidate == expected }
        let prefix = expected[..<range.lowerBound], suffix = expected[range.upperBound...]
        guard candidate.hasPrefix(prefix), candidate.hasSuffix(suffix),
            candidate.count > prefix.count + suffix.count
        else { return false }
        let tenant = candidate.dropFirst(prefix.count).dropLast(suffix.count)
        return isSafeTenant(tenant)
    }

    /// A tenant id or domain: letters, digits, `-`, `.`, `_`; nothing that changes the path.
    static func isSafeTenant(_ tenant: some StringProtocol) -> Bool {
        !tenant.isEmpty && tenant.count <= 128
            && tenant.unicodeScalars.allSatisfy { scalar in
                (scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar)))
                    || scalar == "-" || scalar == "." || scalar == "_"
            } && tenant != "." && tenant != ".."
    }
}
