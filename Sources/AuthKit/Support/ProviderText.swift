/// Text from outside — a provider or server (`error_description`, claims, Graph fields), the
/// store, the config file, the command line — made safe to show on a terminal. The one
/// cleaner of authkit: the library cleans what it receives with ``clean(_:limit:)``, and the
/// command's every line passes ``displayable(_:)`` on its way out (Terminal), so nothing from
/// outside reaches a terminal as a control sequence.
package enum ProviderText {
    /// Control, format, separator, private-use and unassigned characters become spaces (escape
    /// sequences could rewrite the screen), surrounding whitespace goes, and the length is
    /// bounded; nil when nothing is left.
    package static func clean(_ text: String?, limit: Int = 400) -> String? {
        guard let text else { return nil }
        var out = ""
        for scalar in text.unicodeScalars {
            if out.unicodeScalars.count >= limit {
                out += "…"
                break
            }
            out.unicodeScalars.append(isUnsafe(scalar) ? " " : scalar)
        }
        let trimmed = out.trimmingASCIIWhitespace()
        return trimmed.isEmpty ? nil : trimmed
    }

    /// Control, format (the bidirectional marks, zero-width characters), line and paragraph
    /// separator, private-use and unassigned characters: what text from outside never keeps —
    /// ``clean(_:limit:)`` and a process's name and command line as the agent shows them.
    package static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator, .privateUse, .surrogate, .unassigned: return true
        default: return false
        }
    }

    /// `text` with every character that could steer a terminal replaced by `?`: C0 controls
    /// but newline and tab, DEL, C1 controls (8-bit CSI, OSC …), U+2028/2029 and the
    /// bidirectional controls (U+061C, U+200E/F, U+202A…U+202E, U+2066…U+2069), which can make
    /// a line read differently from what it is (CVE-2021-42574). Everything else, including
    /// every script and emoji, is kept. Printable ASCII is returned as is, without copying.
    package static func displayable(_ text: String) -> String {
        if text.utf8.allSatisfy({ ($0 >= 0x20 && $0 < 0x7F) || $0 == 0x0A || $0 == 0x09 }) { return text }
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            out.append(steersTerminal(scalar) ? "?" : scalar)
        }
        return String(out)
    }

    /// True for the characters ``displayable(_:)`` replaces.
    package static func steersTerminal(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x0A, 0x09: return false
        case 0x00...0x1F, 0x7F...0x9F: return true
        case 0x061C, 0x200E, 0x200F, 0x2028, 0x2029, 0x202A...0x202E, 0x2066...0x2069: return true
        default: return false
        }
    }
}
