import StrictJSON

/// cargo's credential-provider protocol (version 1): the hello the provider says first, the
/// one request line cargo then sends, and the answers. Read and written the same way by
/// `authkit credential cargo` and the lean client.
package enum CargoCredentialText {
    /// What the provider says before it reads a request.
    package static let greeting = #"{"v":[1]}"# + "\n"

    /// One request from cargo: `{"v":1,"kind":"get","operation":"read","registry":{"index-url":…},"args":[…]}`.
    package struct Request: Equatable {
        package var kind: String
        package var indexURL: String
        package var args: [String]

        package init(kind: String, indexURL: String, args: [String]) {
            self.kind = kind
            self.indexURL = indexURL
            self.args = args
        }

        /// `line` read as a request, or what is wrong with it.
        package init(parsing line: String) throws(Problem) {
            let value: JSONValue
            do {
                value = try JSONValue(parsing: line, limits: JSONLimits(maximumBytes: CredentialInput.maximumLineBytes, maximumDepth: 8))
            } catch {
                throw .notJSON(error)
            }
            guard case .object = value else { throw .notObject }
            guard let version = value["v"]?.int64Value, version == 1 else { throw .version }
            guard let kind = value["kind"]?.stringValue, let index = value["registry"]?["index-url"]?.stringValue else {
                throw .incomplete
            }
            self.kind = kind
            indexURL = index
            args = (value["args"]?.arrayValue ?? []).compactMap { $0.stringValue }
        }

        /// The options cargo passes on from `credential-provider`, without the `credential
        /// cargo` that names the subcommand when the provider is authkit itself.
        package var options: [String] {
            var words = args
            if words.first == "credential" { words.removeFirst() }
            if words.first == "cargo" { words.removeFirst() }
            return words
        }

    }

    /// An index URL without `sparse+`: the URL cargo fetches (and sends the token to).
    package static func fetchedURL(_ indexURL: String) -> String {
        indexURL.hasPrefix("sparse+") ? String(indexURL.dropFirst(7)) : indexURL
    }

    /// What is wrong with a request line.
    package enum Problem: Error, Equatable, CustomStringConvertible {
        case notJSON(JSONError)
        case notObject
        case version
        case incomplete

        package var description: String {
            switch self {
            case .notJSON(let error): "cargo's request is not JSON (\(error.description))"
            case .notObject: "cargo's request is not a JSON object"
            case .version: "cargo's request uses a protocol version other than 1"
            case .incomplete: "cargo's request names no kind or index-url"
            }
        }
    }

    /// `get`'s answer: `Bearer TOKEN`, which cargo keeps for its session until `expiration`.
    package static func answer(token: String, expiration: Int) -> String {
        let ok: JSONValue = [
            "Ok": [
                "kind": "get", "token": .string("Bearer " + token), "cache": "expires", "expiration": .number(JSONNumber(expiration)),
                "operation_independent": true,
            ]
        ]
        return ok.serialized() + "\n"
    }

    /// When cargo is to drop the token: a little before it expires (at `expiresAt`, whole
    /// seconds), so that it never sends a dead one.
    package static func expiration(expiresAt: Int, minTTL: Int) -> Int {
        let (expiration, overflow) = expiresAt.subtractingReportingOverflow(min(60, max(0, minTTL)))
        return overflow ? Int.min : expiration
    }

    /// An `{"Err": …}` answer; cargo shows `message` to the user.
    package static func error(kind: String, message: String? = nil) -> String {
        var error: JSONObject = ["kind": .string(kind)]
        if let message { error["message"] = .string(message) }
        return JSONValue.object(["Err": .object(error)]).serialized() + "\n"
    }
}
