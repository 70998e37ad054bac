/// Text that came from a provider or server (`error_description`, Graph error messages),
/// made safe to show on a terminal: control characters (escape sequences could rewrite the
/// screen) become spaces, and the length is bounded.
enum ProviderText {
    static func clean(_ text: String?, limit: Int = 400) -> String? {
        guard let text else { return nil }
        var out = ""
        for scalar in text.unicodeScalars {
            if out.unicodeScalars.count >= limit {
                out += "…"
                break
            }
            switch scalar.properties.generalCategory {
            case .control, .format, .lineSeparator, .paragraphSeparator, .privateUse, .surrogate, .unassigned:
                out.unicodeScalars.append(" ")
            default:
                out.unicodeScalars.append(scalar)
            }
        }
        let trimmed = out.trimmingASCIIWhitespace()
        return trimmed.isEmpty ? nil : trimmed
    }
}
