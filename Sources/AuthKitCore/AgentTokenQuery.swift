import StrictJSON

/// A `token` request as the lean client writes it: the members `authkit` writes for the same
/// request (docs/agent-protocol.md), without `Codable`.
package struct AgentTokenQuery: Equatable {
    package var group: String
    /// The store's name (`secret-service` …).
    package var storage: String
    package var account: String?
    package var scopes: [String]
    package var resources: [String]
    package var minTTL: Int
    /// The program the token is for, when the lean client runs it (`exec`): the agent names it
    /// in its log and matches it against a group's `allow` list.
    package var program: String?

    package init(
        group: String, storage: String, account: String?, scopes: [String], resources: [String], minTTL: Int, program: String? = nil
    ) {
        self.group = group
        self.storage = storage
        self.account = account
        self.scopes = scopes
        self.resources = resources
        self.minTTL = minTTL
        self.program = program
    }

    /// The request line, with its newline.
    package var line: [UInt8] {
        var object = JSONObject()
        object["v"] = .number(JSONNumber(1))
        object["op"] = .string("token")
        object["group"] = .string(group)
        object["storage"] = .string(storage)
        if let account { object["account"] = .string(account) }
        if !scopes.isEmpty { object["scopes"] = .array(scopes.map { .string($0) }) }
        if !resources.isEmpty { object["resources"] = .array(resources.map { .string($0) }) }
        object["min_ttl"] = .number(JSONNumber(minTTL))
        if let program { object["program"] = .string(program) }
        return JSONValue.object(object).serializedBytes() + [0x0A]
    }
}
