/// What the `iss` claim of an id_token must be.
///
/// Usually the exact issuer of the provider's discovery document. Microsoft's multi-tenant
/// endpoints (`common`, `organizations`) publish an issuer *template* instead,
/// `https://login.microsoftonline.com/{tenantid}/v2.0`: the tenant comes from the token's own
/// `tid` claim, which is inserted into the template before the exact comparison.
public enum IssuerRule: Sendable, Hashable, CustomStringConvertible {
    /// `iss` must equal this string exactly (OpenID Connect Core §3.1.3.7 step 2).
    case exact(String)
    /// `iss` must equal this string with `{tenantid}` replaced by the token's `tid`.
    case template(String)

    /// The placeholder of a template.
    public static let tenantPlaceholder = "{tenantid}"

    /// The rule for a configured or discovered issuer: a template when it contains
    /// `{tenantid}`, exact otherwise.
    public init(configured issuer: String) {
        self = issuer.contains(IssuerRule.tenantPlaceholder) ? .template(issuer) : .exact(issuer)
    }

    /// The issuer as configured.
    public var description: String {
        switch self {
        case .exact(let issuer), .template(let issuer): return issuer
        }
    }

    /// Checks `issuer` (the token's `iss`) against the rule, taking the tenant from `tenantID`
    /// (the token's `tid`) for a template.
    func check(issuer: String, tenantID: String?) throws(JOSEError) {
        switch self {
        case .exact(let expected):
            guard issuer == expected else { throw .wrongIssuer(expected: expected) }
        case .template(let template):
            guard let tenantID, IssuerRule.isSafeTenantID(tenantID) else { throw .invalidTenantID }
            guard issuer.utf8.elementsEqual(IssuerRule.fill(template, tenantID: tenantID)) else {
                throw .wrongIssuer(expected: template)
            }
        }
    }

    /// `template` with every `{tenantid}` replaced by `tenantID`, as UTF-8. Byte-wise on
    /// purpose: `String.replacing` works on Characters and costs more than a signature check's
    /// bookkeeping.
    static func fill(_ template: String, tenantID: String) -> [UInt8] {
        let source = Array(template.utf8)
        let placeholder = Array(tenantPlaceholder.utf8)
        var filled: [UInt8] = []
        filled.reserveCapacity(source.count + tenantID.utf8.count)
        var index = 0
        while index < source.count {
            if source.count - index >= placeholder.count, source[index..<(index + placeholder.count)].elementsEqual(placeholder) {
                filled.append(contentsOf: tenantID.utf8)
                index += placeholder.count
            } else {
                filled.append(source[index])
                index += 1
            }
        }
        return filled
    }

    /// A tenant id may only be letters, digits, `-`, `.` and `_` (Microsoft's are GUIDs): a
    /// `tid` with `/`, `?`, `#`, `{`, `%`, `@` or the like could otherwise reshape the issuer
    /// URL it is pasted into.
    static func isSafeTenantID(_ tenantID: String) -> Bool {
        guard !tenantID.isEmpty, tenantID.utf8.count <= 64 else { return false }
        return tenantID.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"):
                return true
            default:
                return false
            }
        } && tenantID != "." && tenantID != ".."
    }
}
