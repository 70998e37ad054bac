import StrictJSON
import Testing

@Suite struct JSONSerializerTests {
    @Test func roundTripsThroughTheParser() throws {
        let text = #"{"b":[1,2.5,"x\"y\\z",null,true,{}],"a":{"c":[]},"é":"😀"}"#
        let value = try JSONValue(parsing: text)
        #expect(value.serialized() == text)
        #expect(try JSONValue(parsing: value.serialized()) == value)
    }

    @Test func writesEveryEscapeAndReadsItBack() throws {
        let value: JSONValue = [
            "s": .string("quote \" backslash \\ newline \n return \r tab \t \u{8}\u{C} nul \u{0} é ✓ 𝄞"),
            "n": .number(JSONNumber(UInt64(1_763_750_000))), "m": -1, "b": true, "z": nil, "a": [.string("")],
        ]
        let text = value.serialized()
        #expect(text == #"{"s":"quote \" backslash \\ newline \n return \r tab \t \b\f nul \u0000 é ✓ 𝄞","n":1763750000,"m":-1,"b":true,"z":null,"a":[""]}"#)
        #expect(try JSONValue(parsing: text) == value)
    }

    @Test func sortsKeysByUTF8() throws {
        let value: JSONValue = ["b": 1, "a": ["d": 1, "c": 2], "B": 3]
        #expect(value.serialized(options: .sortedKeys) == #"{"B":3,"a":{"c":2,"d":1},"b":1}"#)
    }

    @Test func prettyPrints() {
        let value: JSONValue = ["a": [1, 2], "b": [:]]
        #expect(value.serialized(options: [.prettyPrinted]) == "{\n  \"a\": [\n    1,\n    2\n  ],\n  \"b\": {}\n}")
    }

    @Test func escapesTerminalControlCharacters() throws {
        let value = JSONValue.string("a\u{1B}[31mred\u{7F}\u{9B}1m\u{2028}\t")
        let text = value.serialized()
        #expect(text == #""a\u001b[31mred\u007f\u009b1m\u2028\t""#)
        #expect(!text.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) })
        #expect(try JSONValue(parsing: text) == value)
    }

    @Test func objectEqualityIgnoresOrder() throws {
        let first = try JSONValue(parsing: #"{"a":1,"b":[1,2]}"#)
        let second = try JSONValue(parsing: #"{"b":[1,2],"a":1}"#)
        #expect(first == second)
        #expect(first.hashValue == second.hashValue)
        #expect(first != (try JSONValue(parsing: #"{"b":[2,1],"a":1}"#)))
    }
}
