import Foundation
import TestSupport

/// Reading what `authkit` printed, as a person would.
enum CLIOutput {
    /// The authorization URL `authkit login` shows (an indented line of its own).
    static func authorizationURL(in text: String) -> URL? {
        for line in text.split(separator: "\n") {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            // The authorization URL (--no-browser, --paste), or the browser's one-time start link.
            if trimmed.hasPrefix("http"), trimmed.contains("/authorize?") || trimmed.contains("/authkit-start/"),
                let url = URL(string: trimmed)
            {
                return url
            }
        }
        return nil
    }

    /// The verification URI and user code `authkit login --device-code` shows:
    /// "To sign in, open URI on any device and enter the code:" then the code on its own line.
    static func deviceCode(in text: String) -> (uri: URL, code: String)? {
        let lines = text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        guard let index = lines.firstIndex(where: { $0.hasPrefix("To sign in, open ") }),
            let uriEnd = lines[index].range(of: " on any device")
        else { return nil }
        let uri = lines[index][lines[index].index(lines[index].startIndex, offsetBy: "To sign in, open ".count)..<uriEnd.lowerBound]
        guard let url = URL(string: String(uri)), let code = lines[(index + 1)...].first(where: { !$0.isEmpty }) else { return nil }
        return (url, code)
    }

    /// Parses a JSON object printed on standard output.
    static func jsonObject(_ text: String) throws -> [String: Any] {
        guard let object = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] else {
            throw HarnessFailure("not a JSON object: \(text.prefix(300))")
        }
        return object
    }

    /// The lines of `text` without the trailing empty one.
    static func lines(_ text: String) -> [String] {
        text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init).filter { !$0.isEmpty }
    }
}
