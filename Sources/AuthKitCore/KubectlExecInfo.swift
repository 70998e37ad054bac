import StrictJSON

/// client-go's side of the exec credential plug-in protocol, as authkit's kubectl plug-in and
/// the lean client read it: `KUBERNETES_EXEC_INFO` and the `ExecCredential` answer.
package enum KubectlExecInfo {
    package static let v1 = "client.authentication.k8s.io/v1"
    package static let v1beta1 = "client.authentication.k8s.io/v1beta1"
    /// How large and deep `KUBERNETES_EXEC_INFO` may be (a cluster's CA bundle is in it).
    package static let limits = JSONLimits(maximumBytes: 256 << 10, maximumDepth: 16)

    /// The API server kubectl asks for (`spec.cluster.server`, sent only with
    /// `provideClusterInfo: true`).
    package static func server(_ info: JSONValue?) -> String? {
        info?["spec"]?["cluster"]?["server"]?.stringValue
    }

    /// `url` with its scheme and authority in lower case and no trailing `/`: two servers are
    /// the same when these are.
    package static func normalized(_ url: String) -> String {
        var text = Substring(url)
        while text.hasSuffix("/") { text = text.dropLast() }
        guard let colon = text.firstIndex(of: ":"), text[colon...].hasPrefix("://") else { return String(text) }
        let authorityStart = text.index(colon, offsetBy: 3)
        let authorityEnd = text[authorityStart...].firstIndex(of: "/") ?? text.endIndex
        return text[..<authorityEnd].lowercased() + text[authorityEnd...]
    }

    /// The answer: an `ExecCredential` of `apiVersion` with `token`, expiring at `expiresAt`
    /// (Unix seconds), and its newline.
    package static func answer(apiVersion: String, token: String, expiresAt: Int) -> String {
        var status = JSONObject()
        status["token"] = .string(token)
        status["expirationTimestamp"] = .string(RFC3339.utc(expiresAt))
        var object = JSONObject()
        object["apiVersion"] = .string(apiVersion)
        object["kind"] = .string("ExecCredential")
        object["status"] = .object(status)
        return JSONValue.object(object).serialized() + "\n"
    }

    /// An `https://` URL of the plainest kind: a host of letters, digits, `.` and `-`, a port
    /// of at most five digits, and a path of letters, digits and `.` `_` `~` `-` `/`. The lean
    /// client serves only such a server; authkit (which parses URLs with Foundation) takes
    /// these and others, so the lean client hands any other to it.
    package static func isPlainHTTPS(_ url: String) -> Bool {
        let bytes = Array(url.utf8)
        let scheme = Array("https://".utf8)
        guard bytes.count > scheme.count, bytes.count <= 2048, bytes[..<scheme.count].elementsEqual(scheme) else { return false }
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
}
