/// URLs of the plainest kind, which the lean client can judge without a URL parser: a scheme
/// of `https://` (or `http://` to a loopback host, where allowed), a host of letters, digits,
/// `.` and `-`, a port of at most five digits, and a path of letters, digits and `.` `_` `~`
/// `-` `/` — no user, query or fragment. authkit (which parses URLs with Foundation) takes
/// these and others; tests keep every URL this takes one authkit takes too.
package enum PlainURL {
    /// Whether `url` is such a URL.
    package static func isPlain(_ url: String, loopbackHTTP: Bool = false) -> Bool {
        let bytes = Array(url.utf8)
        let https = Array("https://".utf8), http = Array("http://".utf8)
        let scheme: [UInt8]
        if bytes.starts(with: https) {
            scheme = https
        } else if loopbackHTTP, bytes.starts(with: http) {
            scheme = http
        } else {
            return false
        }
        guard bytes.count > scheme.count, bytes.count <= 2048 else { return false }
        func isAlphanumeric(_ byte: UInt8) -> Bool {
            (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte)
        }
        var index = scheme.count
        var host = 0
        while index < bytes.count, isAlphanumeric(bytes[index]) || bytes[index] == UInt8(ascii: ".") || bytes[index] == UInt8(ascii: "-") {
            index += 1
            host += 1
        }
        guard host > 0 else { return false }
        if scheme == http {
            guard isLoopback(host: String(decoding: bytes[scheme.count..<(scheme.count + host)], as: UTF8.self)) else { return false }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: ":") {
            index += 1
            var digits = 0
            while index < bytes.count, (0x30...0x39).contains(bytes[index]) {
                index += 1
                digits += 1
            }
            guard (1...5).contains(digits) else { return false }
        }
        guard index == bytes.count || bytes[index] == UInt8(ascii: "/") else { return false }
        return bytes[index...].allSatisfy { byte in
            isAlphanumeric(byte) || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "~")
                || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "/")
        }
    }

    /// 127.0.0.0/8, ::1 and `localhost`.
    package static func isLoopback(host: String) -> Bool {
        var name = host.lowercased()
        if name.hasPrefix("[") && name.hasSuffix("]") { name = String(name.dropFirst().dropLast()) }
        if name == "localhost" || name == "::1" || name == "0:0:0:0:0:0:0:1" { return true }
        let octets = name.split(separator: ".", omittingEmptySubsequences: false)
        guard octets.count == 4, octets[0] == "127" else { return false }
        // Digits only (`UInt8` would also read a sign, `+0`), and no leading zero: glibc and curl
        // read `08` as octal, or as a name to look up.
        return octets.allSatisfy { octet in
            octet.utf8.allSatisfy { (0x30...0x39).contains($0) } && UInt8(octet) != nil && (octet == "0" || !octet.hasPrefix("0"))
        }
    }
}
