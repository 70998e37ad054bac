/// A profile's settings (the configuration file's keys) as the lean client judges them:
/// ``passes(_:_:)`` is true only where authkit's `ProfileResolver` takes the value, and false
/// wherever it refuses it or telling would need more than this knows (a URL authkit parses
/// with Foundation that is not a ``PlainURL``). Tests keep the two in step.
package enum ProfileSettings {
    /// `dpop` (authkit's `DPoPMode`).
    package static let dpopModes = ["auto", "always", "never"]
    /// `redirect_host` (authkit's `LoopbackRedirectReceiver.RedirectHost`).
    package static let redirectHosts = ["127.0.0.1", "localhost"]
    /// The `{tenantid}` of an issuer template, which authkit checks as `common`.
    package static let tenantPlaceholder = "{tenantid}"

    /// Whether authkit takes `value` for the profile setting `key`.
    package static func passes(_ key: String, _ value: String) -> Bool {
        func isASCIIName(_ text: String, limit: Int) -> Bool {
            !text.isEmpty && text.utf8.count <= limit && text != "." && text != ".."
                && text.utf8.allSatisfy { byte in
                    (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte)
                        || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
                }
        }
        func list(_ text: String) -> [Substring] { text.split(whereSeparator: { $0 == " " || $0 == "," }) }
        switch key {
        case "issuer": return PlainURL.isPlain(replacingPlaceholder(value), loopbackHTTP: true)
        case "graph_url": return PlainURL.isPlain(value, loopbackHTTP: true)
        case "tenant": return isASCIIName(value, limit: 128)
        case "client_id":
            return value.unicodeScalars.allSatisfy { $0.value > 0x20 && $0.value != 0x7F } && value.count <= 256
        case "client_secret", "login_hint", "prompt", "domain_hint": return true
        case "scopes": return !value.contains("\"") && !value.contains("\\")
        case "group": return GroupName.isValid(value)
        case "redirect_path": return value.hasPrefix("/") && !value.contains("?") && !value.contains("#") && !value.contains(" ")
        case "redirect_host": return redirectHosts.contains(value)
        case "redirect_port": return Int(value).map { (1...65535).contains($0) } ?? false
        case "resources": return list(value).allSatisfy { TokenText.isResource(String($0)) }
        case "dpop": return dpopModes.contains(value)
        case "storage": return StoreNames.all.contains(value)
        default: return false
        }
    }

    /// `text` with every `{tenantid}` as `common`.
    static func replacingPlaceholder(_ text: String) -> String {
        let bytes = Array(text.utf8), pattern = Array(tenantPlaceholder.utf8), common = Array("common".utf8)
        var result: [UInt8] = []
        var index = 0
        while index < bytes.count {
            if bytes[index...].starts(with: pattern) {
                result += common
                index += pattern.count
            } else {
                result.append(bytes[index])
                index += 1
            }
        }
        return String(decoding: result, as: UTF8.self)
    }
}
