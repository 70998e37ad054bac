/// The protected header of a compact JWS (RFC 7515 §4).
///
/// Parsing checks what the JWS rules require of every header: `alg` is a string, `kid`,
/// `typ` and `cty` are strings when present, `crit` is a non-empty list of extension names
/// that are all present and all understood, `b64` is not `false`, and there is no `zip`
/// (compression is for JWE only). Whether the algorithm is
/// acceptable is for ``JWSVerifier`` to decide.
///
/// `jwk`, `jku`, `x5u` and `x5c` are kept in ``json`` (so they can be shown) but are never
/// used to find a key: keys come from the caller's ``JWKSet`` only.
public struct JOSEHeader: Sendable {
    /// `alg`, as written (not necessarily an algorithm authkit implements).
    public let algorithm: String
    /// `kid`, when present.
    public let keyID: String?
    /// `typ`, when present.
    public let type: String?
    /// `cty`, when present.
    public let contentType: String?
    /// `crit`: the extension parameters the signer marked as must-understand.
    public let critical: [String]
    /// The whole header object, members in their original order.
    public let json: JSONObject

    /// The header as a JSON value (for printing).
    public var jsonValue: JSONValue { .object(json) }

    /// Header parameters JWS and JWA define; RFC 7515 §4.1.11 forbids listing them in `crit`.
    private static let registered: Set<String> = [
        "alg", "jku", "jwk", "kid", "x5u", "x5c", "x5t", "x5t#S256", "typ", "cty", "crit",
    ]

    /// Extensions authkit understands when marked critical: `b64` (RFC 7797), and only with
    /// the value `true`, which changes nothing.
    private static let understood: Set<String> = ["b64"]

    /// Checks a decoded header object.
    public init(json: JSONObject) throws(JOSEError) {
        guard let algValue = json["alg"] else { throw .malformedToken("the header has no alg") }
        guard let algorithm = algValue.stringValue else { throw .malformedToken("the header's alg is not a string") }
        self.algorithm = algorithm
        keyID = try JOSEHeader.optionalString(json, "kid")
        type = try JOSEHeader.optionalString(json, "typ")
        contentType = try JOSEHeader.optionalString(json, "cty")

        // `zip` belongs to JWE (RFC 7516 §4.1.3): a JWS has no such parameter, and RFC 8725 §3.6
        // advises against compression. A verifier that ignored it would accept a payload that
        // another parser might decompress into something else.
        if json["zip"] != nil {
            throw .malformedToken("the header has zip: compression is defined for encrypted tokens only, not for signed ones")
        }
        if let b64 = json["b64"] {
            guard let flag = b64.boolValue else { throw .malformedToken("the header's b64 is not a Boolean") }
            guard flag else { throw .unencodedPayloadUnsupported }
        }

        var critical: [String] = []
        if let crit = json["crit"] {
            guard let names = crit.arrayValue, !names.isEmpty else {
                throw .malformedToken("the header's crit is not a non-empty array")
            }
            for value in names {
                guard let name = value.stringValue else { throw .malformedToken("the header's crit lists a non-string") }
                guard !critical.contains(name) else { throw .malformedToken("the header's crit lists a name twice") }
                guard !JOSEHeader.registered.contains(name) else {
                    throw .malformedToken("the header's crit lists a standard parameter")
                }
                guard json[name] != nil else {
                    throw .malformedToken("the header's crit lists a parameter the header does not have")
                }
                guard JOSEHeader.understood.contains(name) else { throw .unknownCriticalHeader(name) }
                critical.append(name)
            }
        }
        self.critical = critical
        self.json = json
    }

    private static func optionalString(_ json: JSONObject, _ name: String) throws(JOSEError) -> String? {
        guard let value = json[name] else { return nil }
        guard let string = value.stringValue else { throw .malformedToken("the header's \(name) is not a string") }
        return string
    }
}
