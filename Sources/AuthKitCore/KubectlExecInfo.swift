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

    /// An `https://` URL of the plainest kind (``PlainURL``): the lean client serves only such
    /// a server; authkit (which parses URLs with Foundation) takes these and others, so the lean
    /// client hands any other to it.
    package static func isPlainHTTPS(_ url: String) -> Bool { PlainURL.isPlain(url) }
}
