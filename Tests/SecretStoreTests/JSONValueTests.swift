import Testing
@testable import SecretStore

@Suite struct JSONValueTests {
    @Test func roundTrip() throws {
        let value = JSONValue.object([
            ("s", .string("quote \" backslash \\ newline \n tab \t nul \u{0} é ✓ 𝄞")), ("n", .number(1_763_750_000)),
            ("b", .bool(true)), ("z", .null), ("a", .array([.number(-1), .string("")])),
        ])
        #expect(try JSONValue.parse(Array(value.serialized().utf8)) == value)
    }

    @Test func parsesEscapes() throws {
        #expect(try JSONValue.parse(Array(#""\u00e9\ud834\udd1e\/""#.utf8)) == .string("é𝄞/"))
    }

    @Test(arguments: ["", "{", "[1,]", "{\"a\" 1}", "\"unterminated", "\"\\ud834\"", "tru", "1 2", "\"\u{1}\"", "{\"a\":1}x"])
    func rejectsMalformedInput(_ text: String) {
        #expect(throws: JSONValue.ParseError.self) { try JSONValue.parse(Array(text.utf8)) }
    }

    @Test func rejectsInvalidUTF8AndDeepNesting() {
        #expect(throws: JSONValue.ParseError.self) { try JSONValue.parse([0x22, 0xFF, 0x22]) }
        #expect(throws: JSONValue.ParseError.self) { try JSONValue.parse(Array((String(repeating: "[", count: 100)).utf8)) }
    }
}
