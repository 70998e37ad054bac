import AuthKitCore
import Foundation
import TestSupport
import Testing

@testable import AuthKit
@testable import SecretStore

/// The lean client reads a stored record (AuthKitCore's `StoredTokenRecord`) only where
/// authkit's `TokenRecord.decode` reads it, to the same token, account and expiry: random
/// records around one authkit wrote. Set `AUTHKIT_FUZZ_SEED` to replay the seed a failure names.
@Suite struct LeanStoreParityTests {
    static let seed: UInt64 =
        ProcessInfo.processInfo.environment["AUTHKIT_FUZZ_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 0...UInt64.max)

    /// A record authkit writes, as its members' JSON texts.
    static func members() throws -> [(String, String)] {
        let record = TokenRecord(
            version: 1, generation: 3, issuer: "https://idp.example", configuredIssuer: "https://idp.example", subject: "sub-1",
            account: "ada@example.test", name: "Ada", tenantID: nil, clientID: "cli", clientSecret: nil,
            tokenEndpoint: StoredURL(URL(string: "https://idp.example/token")!),
            jwksURI: StoredURL(URL(string: "http://127.0.0.1:8080/jwks")!),
            revocationEndpoint: StoredURL(URL(string: "https://idp.example/revoke")!), tokenEndpointAuthMethods: ["none"],
            idTokenAlgorithms: ["RS256"], graphBaseURL: nil, scopes: ["openid", "offline_access"], accessToken: "AT-lean-parity",
            accessTokenExpiresAt: 1_900_000_000.25, refreshToken: "RT-lean-parity", idToken: "a.b.c", idTokenVerifiedAt: 1_800_000_000,
            additionalTokens: ["User.Read": .init(accessToken: "AT2", expiresAt: 1_900_000_100, scopes: ["User.Read"])],
            signedInAt: 1_800_000_000.5, refreshedAt: nil)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(record.encoded())) as? [String: Any])
        return try object.keys.sorted().map { key in
            let text = try JSONSerialization.data(
                withJSONObject: try #require(object[key]), options: [.fragmentsAllowed, .withoutEscapingSlashes])
            return (key, String(decoding: text, as: UTF8.self))
        }
    }

    /// Values a member may be given: every JSON type, edge numbers, URLs and tokens.
    static let values = [
        "null", "\"\"", "\"text\"", "\"a b\"", "\"é\"", "1", "0", "-1", "1.5", "1e3", "1e400", "-0", "100000000001", "1900000000.75",
        "1.0", "1e-400", "true", "false", "[]", "[\"a\"]", "[1]", "{}", "\"https://a.example/x\"", "\"http://127.0.0.1:8/t\"",
        "\"http://example.com/t\"",
        "\"ftp://x/\"", "\"https://a.example/?q=1\"", "\"not a url\"", "\"https://a.example:99999/\"", "\"DPoP\"",
        "\"0123456789abcdefghijklmnopqrstuvwxyzABCDEFG\"", "\"tpm\"", "\"AT-other\"",
        #"{"k":{"scopes":["s"],"access_token":"x","expires_at":5}}"#, #"{"k":{"scopes":["s"],"accessToken":"x"}}"#,
        #"{"k":{"scopes":null,"access_token":"x"}}"#, #"{"k":{"access_token":null,"accessToken":"x","scopes":[]}}"#,
        #"{"k":{"scopes":[],"access_token":"a b"}}"#, #"{"k":1}"#, #"{"k":{"scopes":[],"access_token":"x","resources":null}}"#,
        #"{"k":{"scopes":[],"access_token":"x","resources":[1]}}"#, #"{"k":{"scopes":[],"access_token":"x","expires_at":-1}}"#,
    ]
    static let names = [
        "version", "generation", "issuer", "account", "client_id", "token_endpoint", "jwks_uri", "revocation_endpoint", "graph_base_url",
        "scopes", "id_token_algorithms", "access_token", "access_token_expires_at", "refresh_token", "id_token", "signed_in_at",
        "refreshed_at", "additional_tokens", "token_type", "dpop_jkt", "dpop_key", "token_exchange", "refresh_problem_at", "unknown",
        "configured_issuer", "subject", "name", "tenant_id", "client_secret", "refresh_problem", "token_endpoint_auth_methods",
        "id_token_verified_at",
    ]

    @Test func aRecordTheLeanClientReadsIsOneAuthkitReadsTheSameWay() throws {
        let base = try Self.members()
        var generator = SplitMix64(seed: Self.seed)
        var (read, refusedByBoth, leftToAuthkit) = (0, 0, 0)
        for round in 0..<6000 {
            var members = base
            for _ in 0..<(round == 0 ? 0 : Int.random(in: 1...3, using: &generator)) {
                let name = Self.names.randomElement(using: &generator) ?? "version"
                switch Int.random(in: 0..<10, using: &generator) {
                case 0: members.removeAll { $0.0 == name }
                case 1: members.append((name, Self.values.randomElement(using: &generator) ?? "null"))  // twice, or new
                default:
                    members.removeAll { $0.0 == name }
                    members.append((name, Self.values.randomElement(using: &generator) ?? "null"))
                }
            }
            let text = "{" + members.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}"
            let lean = StoredTokenRecord(secret: Array(text.utf8))
            let full = try? TokenRecord.decode(Array(text.utf8))
            if round == 0 { #expect(lean != nil && full != nil, "seed \(Self.seed): authkit's own record") }
            guard let lean else {
                if full == nil { refusedByBoth += 1 } else { leftToAuthkit += 1 }
                continue
            }
            read += 1
            guard let full else {
                Issue.record("seed \(Self.seed): read by the lean client only: \(text)")
                continue
            }
            #expect(full.accessToken == lean.accessToken && full.account == lean.account && !full.isDPoP, "seed \(Self.seed): \(text)")
            #expect(full.accessTokenExpiry.timeIntervalSince1970 == lean.expiresAt, "seed \(Self.seed): \(text)")
        }
        // Each kind of outcome happened: the comparison above is not empty.
        #expect(read > 300 && refusedByBoth > 300 && leftToAuthkit > 5, "seed \(Self.seed): \(read) \(refusedByBoth) \(leftToAuthkit)")
    }

    /// The item the lean client reads is one authkit reads as sound (`ItemSchema.key`) and of
    /// the account asked for (`SharedSession.matches`): random attributes.
    @Test func anItemTheLeanClientReadsIsOneAuthkitReadsAsSound() throws {
        let record = Array(("{" + (try Self.members()).map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}").utf8)
        var generator = SplitMix64(seed: Self.seed ^ 0x4954_454D)
        let values = ["", "x", "ada@example.test", "ADA@example.test", "tokens", "1", "2"]
        var read = 0
        for _ in 0..<4000 {
            var attributes: [String: String] = [:]
            for name in ["issuer", "client_id", "account", "kind", "format", "group"]
            where Bool.random(using: &generator) || name != "format" {
                if Int.random(in: 0..<8, using: &generator) > 0 { attributes[name] = values.randomElement(using: &generator) }
            }
            let account = [nil, "ada@example.test", "Ada@example.test", "x"].randomElement(using: &generator) ?? nil
            let item = StoredTokenItem(attributes: attributes, isLocked: false, secret: record)
            guard StoredTokenRecord.chosen(from: [item], account: account) != nil else { continue }
            read += 1
            let group = try SecretGroup("com.example.parity")
            let (key, problem) = ItemSchema.key(from: attributes, group: group, secret: item.secret)
            #expect(problem == nil && key.kind == TokenRecord.kind, "seed \(Self.seed): \(attributes)")
            #expect(SharedSession.matches(key, account: account), "seed \(Self.seed): \(attributes) \(account ?? "-")")
        }
        #expect(read > 20, "seed \(Self.seed): \(read)")
    }

    @Test func theItemsLayoutIsTheStores() {
        #expect(StoredTokenItem.schema == ItemSchema.name)
        #expect(StoredTokenItem.schemaAttributes == ItemSchema.keyAttributes + [ItemSchema.formatAttribute])
        #expect(StoredTokenItem.kind == TokenRecord.kind)
        #expect(StoredTokenRecord.version == Int64(TokenRecord.currentVersion))
    }
}
