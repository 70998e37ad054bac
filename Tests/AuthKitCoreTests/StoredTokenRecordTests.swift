import AuthKitCore
import Testing

/// Which stored item the lean client reads a token from, and which it leaves to authkit.
@Suite struct StoredTokenRecordTests {
    /// A record's members, as JSON texts.
    static let members: [(String, String)] = [
        ("version", "1"), ("generation", "2"), ("issuer", #""https://idp.example""#), ("configured_issuer", #""https://idp.example""#),
        ("subject", #""s""#), ("account", #""ada@example.test""#), ("client_id", #""cli""#),
        ("token_endpoint", #""https://idp.example/token""#), ("jwks_uri", #""http://127.0.0.1:9/jwks""#),
        ("id_token_algorithms", #"["RS256"]"#), ("scopes", #"["openid"]"#), ("access_token", #""AT-1""#),
        ("refresh_token", #""RT-1""#), ("signed_in_at", "1800000000.5"),
    ]
    static let record = text(members)

    static func text(_ members: [(String, String)]) -> String {
        "{" + members.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}"
    }

    /// The record with `member` set to `value` (replaced where it has one, else added).
    static func with(_ member: String, _ value: String) -> String {
        text(members.filter { $0.0 != member } + [(member, value)])
    }

    static let attributes = [
        "group": "g", "issuer": "https://idp.example", "client_id": "cli", "account": "ada@example.test", "kind": "tokens",
    ]

    static func item(_ attributes: [String: String] = attributes, locked: Bool = false, secret: String? = record) -> StoredTokenItem {
        StoredTokenItem(attributes: attributes, isLocked: locked, secret: secret.map { Array($0.utf8) })
    }

    @Test func oneSoundUnlockedItemOfTheAccountAskedForIsRead() throws {
        let read = try #require(StoredTokenRecord.chosen(from: [Self.item()], account: nil))
        #expect(read.accessToken == "AT-1" && read.account == "ada@example.test")
        // No expiry stored: an hour after the sign-in, through a Date as authkit computes it.
        #expect(read.expiresAt == 1_800_003_600.5 && read.expiresAt.rounded(.down) == 1_800_003_600)
        #expect(StoredTokenRecord.chosen(from: [Self.item()], account: "ada@example.test") == read)
        var formatted = Self.attributes
        formatted["format"] = "1"
        #expect(StoredTokenRecord.chosen(from: [Self.item(formatted)], account: nil) == read)
    }

    @Test func everythingElseIsAuthkitsToDecide() {
        var cases: [([StoredTokenItem], String?)] = [
            ([], nil),  // nobody signed in
            ([Self.item(), Self.item()], nil),  // two items: two accounts, or one twice
            ([Self.item(locked: true)], nil),  // unlocking may ask a person
            ([Self.item(secret: nil)], nil), ([Self.item(secret: "{}")], nil), ([Self.item(secret: "not json")], nil),
            ([Self.item()], "grace@example.test"), ([Self.item()], "ADA@example.test"),  // (authkit ignores case)
        ]
        for name in ["issuer", "client_id", "account", "kind"] {
            var attributes = Self.attributes
            attributes[name] = nil
            cases.append(([Self.item(attributes)], nil))
            attributes[name] = ""
            cases.append(([Self.item(attributes)], nil))
        }
        var newer = Self.attributes
        newer["format"] = "2"
        cases.append(([Self.item(newer)], nil))
        for (items, account) in cases {
            #expect(StoredTokenRecord.chosen(from: items, account: account) == nil, "\(items.count) \(account ?? "-")")
        }
    }

    @Test func aRecordIsReadOnlyWhenEveryCheckPasses() {
        let with = Self.with
        #expect(StoredTokenRecord(secret: Array(with("access_token_expires_at", "1900000000").utf8))?.expiresAt == 1_900_000_000)
        #expect(StoredTokenRecord(secret: Array(with("unknown", "[1,{}]").utf8)) != nil)
        #expect(StoredTokenRecord(secret: Array(with("version", "0").utf8)) != nil)
        for refused in [
            with("version", "2"), with("access_token", "\"a b\""), with("access_token", "\"\""), with("client_id", "\"\""),
            with("token_type", "\"DPoP\""), with("graph_base_url", "\"http://graph.example\""), with("refreshed_at", "-1"),
            with("refreshed_at", "1e12"), with("token_exchange", "1"), with("scopes", "[1]"), with("scopes", "null"),
            with("generation", "-1"), with("additional_tokens", #"{"k":{"access_token":"x"}}"#),
            Self.text(Self.members.filter { $0.0 != "subject" }), Self.record + " x", String(Self.record.dropLast()),
        ] {
            #expect(StoredTokenRecord(secret: Array(refused.utf8)) == nil, "\(refused)")
        }
    }
}
