/// OData string literals (OData ABNF: a single quote inside a literal is doubled).
///
/// The Microsoft walkthrough pasted search text into `$filter` raw, so `O'Brien` broke the
/// query and `x') or startswith(mail,'` rewrote it. Here text only ever enters a filter
/// through ``string(_:)``.
package enum ODataLiteral {
    /// `O'Brien` → `'O''Brien'`.
    package static func string(_ text: String) -> String {
        var out = "'"
        for character in text {
            if character == "'" { out += "''" } else { out.append(character) }
        }
        return out + "'"
    }
}
