import StrictJSON

/// The docker-credential-helpers protocol's text: the registry docker names on standard input,
/// and the answers. Read and written the same way by `authkit credential docker` and the lean
/// client.
package enum DockerCredentialText {
    /// docker recognises exactly this answer as "no credentials" (docker-credential-helpers'
    /// `credentials.NewErrCredentialsNotFound`).
    package static let notFound = "credentials not found in native keychain"

    /// The registry on the request's first line, without surrounding spaces, tabs and CRs
    /// (empty when there is none).
    package static func server(_ input: String) -> String {
        // (Swift reads CRLF as one character, which a split at "\n" alone would not split at.)
        input.split(whereSeparator: { $0 == "\n" || $0 == "\r\n" }).first.map { String($0).trimmingCharacters(in: " \t\r") } ?? ""
    }

    /// `get`'s answer.
    package static func answer(server: String, username: String, token: String) -> String {
        let answer: JSONValue = ["ServerURL": .string(server), "Username": .string(username), "Secret": .string(token)]
        return answer.serialized() + "\n"
    }

    /// `list`'s answer: each mapped registry with its user name.
    package static func list(_ registries: [(server: String, username: String)]) -> String {
        var object = JSONObject()
        for (server, username) in registries { object[server] = .string(username) }
        return JSONValue.object(object).serialized(options: [.sortedKeys]) + "\n"
    }
}
