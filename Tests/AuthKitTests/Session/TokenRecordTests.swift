import Foundation
import Testing

@testable import AuthKit

extension StoredURL {
    /// A test's URL literal.
    static func test(_ text: String) -> StoredURL {
        guard let url = URL(string: text) else { preconditionFailure("not a URL: \(text)") }
        return StoredURL(url)
    }
}

// The stored record (docs/sign-in.md, "The stored record"): its JSON field names are a
// contract with other tools of the group and with older and newer authkit versions.

private let accessToken = "AT-9f8e7d6c5b4a39281706f5e4d3c2b1a0"
private let refreshToken = "RT-0a1b2c3d4e5f60718293a4b5c6d7e8f9"
private let idToken = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJlLXZhbHVl"
private let clientSecret = "CS-d41d8cd98f00b204e9800998ecf8427e"
private let scopedToken = "AT2-aabbccddeeff00112233445566778899"

private func sample() -> TokenRecord {
    TokenRecord(
        version: 1, generation: 3, issuer: "https://idp.example", configuredIssuer: "https://idp.example", subject: "sub-1",
        account: "ada@example.test", name: "Ada Lovelace", tenantID: nil, clientID: "cli", clientSecret: clientSecret,
        tokenEndpoint: .test("https://idp.example/token"), jwksURI: .test("https://idp.example/jwks"),
        revocationEndpoint: .test("https://idp.example/revoke"),
        tokenEndpointAuthMethods: ["client_secret_basic"], idTokenAlgorithms: ["RS256"], graphBaseURL: nil,
        scopes: ["openid", "offline_access"], accessToken: accessToken, accessTokenExpiresAt: 1_900_000_000,
        refreshToken: refreshToken, idToken: idToken, idTokenVerifiedAt: 1_800_000_000,
        additionalTokens: ["User.Read": .init(accessToken: scopedToken, expiresAt: 1_900_000_100, scopes: ["User.Read"])],
        signedInAt: 1_800_000_000, refreshedAt: nil)
}

private func json(_ record: TokenRecord) throws -> [String: Any] {
    try #require(try JSONSerialization.jsonObject(with: Data(try record.encoded())) as? [String: Any])
}

@Suite("TokenRecord")
struct TokenRecordTests {
    @Test("narrowed tokens kept beside the sign-in: the expired dropped, at most maximumAdditionalTokens, the soonest to expire first")
    func additionalTokensAreBounded() throws {
        var record = try sample()
        let now = 1_000_000.0
        func token(_ expires: Double?) -> TokenRecord.ScopedToken {
            TokenRecord.ScopedToken(accessToken: "at", expiresAt: expires, scopes: ["s"])
        }
        record.additionalTokens = ["expired": token(now - 1), "unknown": token(nil)]
        for index in 0..<40 {
            record.additionalTokens = record.addingAdditionalToken(token(now + 100 + Double(index)), for: "k\(index)", now: now)
        }
        let kept = try #require(record.additionalTokens)
        #expect(kept.count == TokenRecord.maximumAdditionalTokens)
        #expect(kept["expired"] == nil && kept["unknown"] == nil && kept["k39"] != nil && kept["k23"] == nil && kept["k24"] != nil)
    }

    @Test("the stored JSON uses the documented field names")
    func fieldNames() throws {
        let object = try json(sample())
        #expect(
            Set(object.keys) == [
                "version", "generation", "issuer", "configured_issuer", "subject", "account", "name", "client_id",
                "client_secret", "token_endpoint", "jwks_uri", "revocation_endpoint", "token_endpoint_auth_methods",
                "id_token_algorithms", "scopes", "access_token", "access_token_expires_at", "refresh_token", "id_token",
                "id_token_verified_at", "additional_tokens", "signed_in_at",
            ])
        let extra = try #require((object["additional_tokens"] as? [String: Any])?["User.Read"] as? [String: Any])
        #expect(Set(extra.keys) == ["access_token", "expires_at", "scopes"])
        #expect(String(decoding: try sample().encoded(), as: UTF8.self).hasPrefix("{\"access_token\""), "sorted keys")
    }

    @Test("encode and decode round-trip; unknown fields from a newer authkit are ignored")
    func roundTrip() throws {
        #expect(try TokenRecord.decode(try sample().encoded()) == sample())
        var object = try json(sample())
        object["added_later"] = ["x": 1]
        let bytes = Array(try JSONSerialization.data(withJSONObject: object))
        #expect(try TokenRecord.decode(bytes) == sample())
    }

    /// A record that shows one value to one parser and another to the next is not
    /// read; the reason names the member, never a value. (SharedSession leaves such an item in
    /// place and reports it as the account's problem.)
    @Test(
        "a stored record with a duplicate member, trailing data or a BOM is refused, naming why",
        arguments: [
            ("access_token", "duplicate member name ‘access_token’"), ("refresh_token", "duplicate member name ‘refresh_token’"),
        ])
    func strictRecords(member: String, reason: String) throws {
        var text = String(decoding: try sample().encoded(), as: UTF8.self)
        text.removeLast()
        text += ",\"\(member)\":\"other-value\"}"
        #expect {
            try TokenRecord.decode(Array(text.utf8))
        } throws: { error in
            guard case .unreadable(let message) = error as? TokenRecord.RecordError else { return false }
            return message.contains(reason) && !message.contains("other-value") && !message.contains(accessToken)
        }
        let valid = try sample().encoded()
        for bad in [valid + Array(" x".utf8), [0xEF, 0xBB, 0xBF] + valid] {
            #expect(throws: TokenRecord.RecordError.self) { try TokenRecord.decode(bad) }
        }
    }

    @Test("a number JSON cannot carry is an error when writing, never an empty record")
    func unwritableRecord() throws {
        var record = sample()
        record.accessTokenExpiresAt = .infinity
        #expect(throws: TokenRecord.RecordError.self) { try record.encoded() }
    }

    @Test("additional tokens written by the first builds (camel-case names) stay readable")
    func legacyScopedTokenNames() throws {
        var object = try json(sample())
        object["additional_tokens"] = ["User.Read": ["accessToken": scopedToken, "expiresAt": 1_900_000_100, "scopes": ["User.Read"]]]
        let record = try TokenRecord.decode(Array(try JSONSerialization.data(withJSONObject: object)))
        #expect(record == sample())
    }

    @Test(
        "unreadable records are typed errors that name no value",
        arguments: [
            ("not json", "not JSON"),
            ("[1, 2]", "an array"),
            ("{\"version\": 1}", "missing fields"),
        ])
    func unreadable(_ input: String, _ what: String) {
        #expect(throws: TokenRecord.RecordError.self, "\(what)") { try TokenRecord.decode(Array(input.utf8)) }
    }

    /// The record's endpoints are typed when it is read: one that is not an absolute http(s) URL
    /// makes the record unreadable (named, its value not shown), never a guessed stand-in later.
    @Test(
        "an endpoint that is no http(s) URL makes the record unreadable", arguments: ["token_endpoint", "jwks_uri", "revocation_endpoint"])
    func endpointsAreURLs(_ field: String) throws {
        for value in ["", "not a url", "file:///etc/passwd", "/token", "ftp://idp.example/token"] {
            var object = try json(sample())
            object[field] = value
            #expect(throws: TokenRecord.RecordError.self, "\(field) = \(value)") {
                try TokenRecord.decode(Array(try JSONSerialization.data(withJSONObject: object)))
            }
        }
    }

    @Test("a record of a newer version is refused rather than half-read; empty required fields are refused")
    func newerVersionAndEmptyFields() throws {
        var object = try json(sample())
        object["version"] = 2
        #expect(throws: TokenRecord.RecordError.newerVersion(2)) {
            try TokenRecord.decode(Array(try JSONSerialization.data(withJSONObject: object)))
        }
        object = try json(sample())
        object["access_token"] = ""
        #expect(throws: TokenRecord.RecordError.unreadable("a required field is empty")) {
            try TokenRecord.decode(Array(try JSONSerialization.data(withJSONObject: object)))
        }
    }

    @Test(
        "a stored token that no header or protocol line can carry is refused, as on receipt",
        arguments: [
            ("access_token", "abc\nhost=evil.example"), ("access_token", "two words"), ("refresh_token", "r\u{7F}"),
            ("id_token", "é"),
        ])
    func storedTokensAreCheckedOnRead(field: String, value: String) throws {
        var object = try json(sample())
        object[field] = value
        let bytes = Array(try JSONSerialization.data(withJSONObject: object))
        #expect(
            throws: TokenRecord.RecordError.unreadable(
                "its \(field) contains spaces, control or non-ASCII characters, which authkit never stores")
        ) {
            try TokenRecord.decode(bytes)
        }
    }

    @Test("a field of the wrong type is named, its value never shown")
    func wrongTypeNamesFieldNotValue() throws {
        var object = try json(sample())
        object["refresh_token"] = ["leaked": refreshToken]
        do {
            _ = try TokenRecord.decode(Array(try JSONSerialization.data(withJSONObject: object)))
            Issue.record("decoded a record whose refresh_token is an object")
        } catch {
            #expect("\(error)".contains("refresh_token"))
            #expect(!"\(error)".contains(refreshToken))
        }
    }

    @Test("without expires_in the access token counts as an hour old token from when it was obtained")
    func expiryFallback() {
        var record = sample()
        record.accessTokenExpiresAt = nil
        #expect(record.accessTokenExpiry == Date(timeIntervalSince1970: 1_800_000_000 + 3600))
        record.refreshedAt = 1_800_001_000
        #expect(record.accessTokenExpiry == Date(timeIntervalSince1970: 1_800_001_000 + 3600))
        #expect(record.accessTokenLives(.seconds(60), at: Date(timeIntervalSince1970: 1_800_001_000 + 3500)))
        #expect(!record.accessTokenLives(.seconds(60), at: Date(timeIntervalSince1970: 1_800_001_000 + 3550)))
    }

    @Test("print, debugPrint, dump and string interpolation show no token or secret")
    func noSecretsInDescriptions() {
        let record = sample()
        var dumped = ""
        dump(record, to: &dumped)
        let texts = ["\(record)", String(describing: record), String(reflecting: record), dumped]
        for text in texts {
            for secret in [accessToken, refreshToken, idToken, clientSecret, scopedToken] {
                #expect(!text.contains(secret), "a secret in: \(text.prefix(200))")
            }
        }
        #expect(record.description.contains("ada@example.test"))
    }
}
