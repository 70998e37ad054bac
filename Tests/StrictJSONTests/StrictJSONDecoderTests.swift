import StrictJSON
import Testing

/// StrictJSONDecoder: the parser's rules for every Codable document, exact numbers.
@Suite struct StrictJSONDecoderTests {
    struct Answer: Decodable, Equatable {
        var access_token: String
        var expires_in: Int?
        var scopes: [String]
        var ratio: Double?
        var nested: Nested?
        var extra: [String: Nested]?
        var flag: Bool?
    }

    struct Nested: Decodable, Equatable {
        var id: UInt64
        var label: String?
    }

    let decoder = StrictJSONDecoder()

    @Test func decodesNestedOptionalArraysAndDictionaries() throws {
        let text =
            #"{"access_token":"a","expires_in":3600,"scopes":["x","y"],"ratio":0.5,"nested":{"id":18446744073709551615},"extra":{"k":{"id":1,"label":null}},"flag":true,"unknown":[1,{"deep":null}]}"#
        let answer = try decoder.decode(Answer.self, from: Array(text.utf8))
        #expect(
            answer
                == Answer(
                    access_token: "a", expires_in: 3600, scopes: ["x", "y"], ratio: 0.5, nested: Nested(id: .max, label: nil),
                    extra: ["k": Nested(id: 1, label: nil)], flag: true))
        // Absent and null optionals are both nil.
        let minimal = try decoder.decode(Answer.self, from: Array(#"{"access_token":"a","scopes":[],"expires_in":null}"#.utf8))
        #expect(minimal.expires_in == nil && minimal.nested == nil)
    }

    /// What Foundation's JSONDecoder lets through, refused with the parser's reason.
    @Test(arguments: [
        (#"{"access_token":"a","access_token":"b","scopes":[]}"#, "duplicate"),
        (#"{"access_token":"a","scopes":[]} x"#, "after"),
        ("\u{FEFF}" + #"{"access_token":"a","scopes":[]}"#, ""),
        (#"{"access_token":"a","scopes":[],"nested":{"id":1,"label":"a","label":"b"}}"#, "duplicate"),
    ])
    func refusesWhatIsNotStrictJSON(text: String, reasonContains: String) throws {
        #expect {
            try decoder.decode(Answer.self, from: Array(text.utf8))
        } throws: { error in
            guard let json = error as? JSONError else { return false }
            return reasonContains.isEmpty || json.reason.contains(reasonContains)
        }
    }

    @Test func refusesInvalidUTF8AndLimits() throws {
        var bytes = Array(#"{"access_token":"a"#.utf8)
        bytes.append(0xFF)
        bytes += Array(#"","scopes":[]}"#.utf8)
        #expect(throws: JSONError.self) { try decoder.decode(Answer.self, from: bytes) }
        let small = StrictJSONDecoder(limits: JSONLimits(maximumBytes: 16, maximumDepth: 2))
        #expect(throws: JSONError.self) { try small.decode(Answer.self, from: Array(#"{"access_token":"a","scopes":[]}"#.utf8)) }
        let deep = #"{"access_token":"a","scopes":[],"unknown":[[[1]]]}"#
        #expect(throws: JSONError.self) {
            try StrictJSONDecoder(limits: JSONLimits(maximumDepth: 3)).decode(Answer.self, from: Array(deep.utf8))
        }
    }

    /// Numbers are exact: never rounded, truncated or wrapped into a field.
    @Test(arguments: ["1.5", "1e400", "9223372036854775808", "-9223372036854775809", "\"3600\"", "true"])
    func refusesAnInexactInteger(number: String) throws {
        let text = #"{"access_token":"a","scopes":[],"expires_in":"# + number + "}"
        #expect(throws: DecodingError.self) { try decoder.decode(Answer.self, from: Array(text.utf8)) }
    }

    @Test func integersAtTheEdgesAndFiniteDoubles() throws {
        let top = try decoder.decode(
            Answer.self, from: Array(#"{"access_token":"a","scopes":[],"expires_in":9223372036854775807,"ratio":1e300}"#.utf8))
        #expect(top.expires_in == .max && top.ratio == 1e300)
        #expect(throws: DecodingError.self) {
            try decoder.decode(Answer.self, from: Array(#"{"access_token":"a","scopes":[],"ratio":-1e400}"#.utf8))
        }
        #expect(throws: DecodingError.self) {
            try decoder.decode(Answer.self, from: Array(#"{"access_token":"a","scopes":[],"nested":{"id":-1}}"#.utf8))
        }
    }

    /// Messages say where and what kind, never the value found.
    @Test func errorsNameThePathNotTheValue() throws {
        do {
            _ = try decoder.decode(Answer.self, from: Array(#"{"access_token":["secret-value"],"scopes":[]}"#.utf8))
            Issue.record("decoded a wrong type")
        } catch let error as DecodingError {
            let text = "\(error)"
            #expect(text.contains("access_token"))
            #expect(!text.contains("secret-value"))
        }
        #expect(throws: DecodingError.self) { try decoder.decode(Answer.self, from: Array(#"{"scopes":[]}"#.utf8)) }
        #expect(throws: DecodingError.self) { try decoder.decode(Answer.self, from: Array(#"[1]"#.utf8)) }
    }
}
