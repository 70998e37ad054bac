/// An item's key as a key description: `authkit1 <issuer> <client_id> <account> <kind>`,
/// each field percent-encoded so that spaces, `%`, `;` and non-ASCII cannot break it apart.
enum KeyDescription {
    static let prefix = "authkit1"

    static func description(for key: ItemKey) -> String {
        ([prefix] + [key.issuer, key.clientID, key.account, key.kind].map(encode)).joined(separator: " ")
    }

    static func key(from description: String, group: SecretGroup) -> (ItemKey, ItemProblem?) {
        let parts = description.split(separator: " ", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 5, parts[0] == prefix, let fields = Optional(parts.dropFirst().map(decode)), fields.allSatisfy({ $0 != nil })
        else {
            let key = ItemKey(group: group, issuer: "", clientID: "", account: "", kind: "")
            return (key, .missingAttributes(["issuer", "client_id", "account", "kind"]))
        }
        let values = fields.map { $0 ?? "" }
        return (ItemKey(group: group, issuer: values[0], clientID: values[1], account: values[2], kind: values[3]), nil)
    }

    static func encode(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "/"), UInt8(ascii: ":"),
                UInt8(ascii: "@"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = Array("0123456789ABCDEF".utf8)
                out += "%" + String(decoding: [hex[Int(byte >> 4)], hex[Int(byte & 0xF)]], as: UTF8.self)
            }
        }
        return out
    }

    static func decode(_ text: String) -> String? {
        var bytes: [UInt8] = []
        var iterator = Array(text.utf8).makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else { bytes.append(byte); continue }
            guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else { return nil }
            bytes.append(high << 4 | low)
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        default: return nil
        }
    }
}
