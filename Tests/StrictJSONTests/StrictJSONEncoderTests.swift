@testable import StrictJSON
import Testing

/// StrictJSONEncoder: Codable values through JSONValue, escaped for terminals, never lossy.
@Suite struct StrictJSONEncoderTests {
    struct Record: Codable, Equatable {
        var name: String
        var count: Int
        var expires: Double?
        var scopes: [String]
        var extra: [String: Inner]?
        var big: UInt64
        var flag: Bool
        var nothing: String?

        enum CodingKeys: String, CodingKey {
            case name, count, expires, scopes, extra, big, flag, nothing
        }
    }

    struct Inner: Codable, Equatable {
        var value: Int64
    }

    let record = Record(
        name: "Se\u{E1}n \u{1B}]52;c;x\u{07} \u{202E}evil", count: -3, expires: 1_700_000_000.5, scopes: ["a", "b"],
        extra: ["k": Inner(value: .max)], big: .max, flag: true, nothing: nil)

    @Test func roundTripsThroughTheStrictDecoder() throws {
        let bytes = try StrictJSONEncoder(options: [.sortedKeys]).encode(record)
        #expect(try StrictJSONDecoder().decode(Record.self, from: bytes) == record)
        let text = String(decoding: bytes, as: UTF8.self)
        // Sorted keys, nil members left out (as Foundation's encoder does), escapes for controls.
        #expect(
            text.hasPrefix(
                #"{"big":18446744073709551615,"count":-3,"expires":1700000000.5,"extra":{"k":{"value":9223372036854775807}},"flag":true,"name":"#
            ))
        #expect(!text.contains("nothing"))
        #expect(text.contains(#"\u001b]52;c;x\u0007 \u202eevil"#))
        #expect(
            !text.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) || (0x202A...0x202E).contains($0.value) })
    }

    @Test func keepsDocumentOrderWithoutSortedKeys() throws {
        let text = try StrictJSONEncoder().encodeString(Inner(value: 1))
        #expect(text == #"{"value":1}"#)
        #expect(try StrictJSONEncoder().encodeString(["x", "y"]) == #"["x","y"]"#)
        #expect(try StrictJSONEncoder().encodeString(Optional<Int>.none) == "null")
    }

    @Test(arguments: [Double.nan, .infinity, -.infinity])
    func refusesNumbersJSONCannotCarry(value: Double) throws {
        var bad = record
        bad.expires = value
        #expect(throws: EncodingError.self) { try StrictJSONEncoder().encode(bad) }
    }

    @Test func prettyPrints() throws {
        #expect(try StrictJSONEncoder(options: [.prettyPrinted]).encodeString(Inner(value: 2)) == "{\n  \"value\": 2\n}")
    }

    struct Report: Encodable {
        var accessTokenExpiresAt: String?
        var clientID: String
        var tenantID: Int?
        var signedIn: Bool?
        var urlPath = "/"
        var nested: Inner?
        var plain = 1
    }

    @Test func nilMembersAreLeftOutByDefaultAndNullWhenAsked() throws {
        let report = Report(accessTokenExpiresAt: nil, clientID: "c", tenantID: nil, signedIn: nil, nested: nil)
        #expect(try StrictJSONEncoder(options: [.sortedKeys]).encodeString(report) == #"{"clientID":"c","plain":1,"urlPath":"/"}"#)
        #expect(
            try StrictJSONEncoder(options: [.sortedKeys], nilEncoding: .null).encodeString(report)
                == #"{"accessTokenExpiresAt":null,"clientID":"c","nested":null,"plain":1,"signedIn":null,"tenantID":null,"urlPath":"/"}"#)
    }

    @Test func snakeCaseNamesAsFoundationDoes() throws {
        let report = Report(accessTokenExpiresAt: "t", clientID: "c", tenantID: 5, signedIn: true, nested: Inner(value: 2))
        #expect(
            try StrictJSONEncoder(options: [.sortedKeys], keyEncoding: .snakeCase).encodeString(report)
                == #"{"access_token_expires_at":"t","client_id":"c","nested":{"value":2},"plain":1,"signed_in":true,"tenant_id":5,"url_path":"/"}"#
        )
        #expect(EncodingSettings.snakeCased("URLPath") == "url_path")
        #expect(EncodingSettings.snakeCased("idTokenVerifiedAt") == "id_token_verified_at")
        #expect(EncodingSettings.snakeCased("already_snake") == "already_snake")
        #expect(EncodingSettings.snakeCased("version2Field") == "version2_field")
    }
}
