#if canImport(Glibc)
import Glibc
#endif

/// How authkit speaks: every error is `authkit: <message>` starting in
/// lower case, followed by at most one `hint:` line; authkit's own typography (‘quotes’,
/// dashes, ✓, …) becomes ASCII where it may not display or is read by a program: a
/// non-UTF-8 locale, `NO_COLOR`, or output that is not a terminal.
enum Voice {
    /// `authkit: SUMMARY` and, when there is one, `hint: HINT`.
    static func error(_ summary: String, hint: String? = nil) -> String {
        var text = "authkit: " + sentence(summary)
        if let hint, !hint.isEmpty { text += "\nhint: " + sentence(hint) }
        return text
    }

    /// `text` as a clause: a leading capital of an ordinary word lowered ("No D-Bus" → "no
    /// D-Bus", but "GLib", "D-Bus", "URL" stay), no final full stop.
    static func sentence(_ text: String) -> String {
        var result = Substring(text)
        while result.last == "." || result.last == " " { result = result.dropLast() }
        let scalars = Array(result.unicodeScalars.prefix(2))
        let firstWord = result.prefix { $0.isLetter }
        if scalars.count == 2, scalars[0].properties.isUppercase, scalars[1].properties.isLowercase,
            !properNouns.contains(String(firstWord))
        {
            return String(result.prefix(1)).lowercased() + result.dropFirst()
        }
        return String(result)
    }

    /// Names that keep their capital at the start of a message.
    static let properNouns: Set<String> = [
        "Microsoft", "Google", "Keycloak", "Entra", "Azure", "OpenID", "Debian", "GNOME", "KeePassXC", "Seahorse", "Graph",
    ]

    /// ArgumentParser's report ("Error: …", "Help: …", "Usage: …", "  See 'authkit x --help'
    /// for more information.") in authkit's voice: the error line and one hint naming the help.
    static func argumentParserMessage(_ message: String) -> String {
        let lines = message.split(separator: "\n", omittingEmptySubsequences: true).map { String($0) }
        guard let first = lines.first, first.hasPrefix("Error: ") else { return message }
        var hint: String?
        if let see = lines.first(where: { $0.trimmingPrefix(while: { $0 == " " }).hasPrefix("See '") }),
            let open = see.firstIndex(of: "'"), let close = see[see.index(after: open)...].firstIndex(of: "'")
        {
            hint = "see `\(see[see.index(after: open)..<close])`"
        }
        return error(String(first.dropFirst("Error: ".count)), hint: hint)
    }

    /// Whether text for descriptor `fd` must be plain ASCII typography.
    static func asciiOnly(fd: Int32) -> Bool {
        if isatty(fd) != 1 { return true }
        if let noColor = getenv("NO_COLOR"), noColor.pointee != 0 { return true }
        return !localeIsUTF8
    }

    /// LC_ALL, else LC_CTYPE, else LANG names a UTF-8 character set (POSIX precedence; unset
    /// or "C"/"POSIX" is ASCII).
    static var localeIsUTF8: Bool {
        for name in ["LC_ALL", "LC_CTYPE", "LANG"] {
            guard let raw = getenv(name), raw.pointee != 0 else { continue }
            let value = String(cString: raw).lowercased()
            return value.contains("utf-8") || value.contains("utf8")
        }
        return false
    }

    /// authkit's own non-ASCII typography, spelled in ASCII.
    static func ascii(_ text: String) -> String {
        guard !text.utf8.allSatisfy({ $0 < 0x80 }) else { return text }
        var out = ""
        out.reserveCapacity(text.utf8.count)
        // A mark that only decorates ("✓ Signed in") goes with its space.
        let text = text.replacing("✓ ", with: "")
        for scalar in text.unicodeScalars {
            switch scalar {
            case "‘", "’": out += "'"
            case "“", "”": out += "\""
            case "—", "–": out += "-"
            case "…": out += "..."
            case "✓": out += "ok"
            case "✗": out += "x"  // a failure stays marked
            case "→": out += "->"
            case "·": out += "-"
            case "≥": out += ">="
            case "≤": out += "<="
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
