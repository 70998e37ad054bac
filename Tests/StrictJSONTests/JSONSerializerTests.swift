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
        #expect(
            text
                == #"{"s":"quote \" backslash \\ newline \n return \r tab \t \b\f nul \u0000 é ✓ 𝄞","n":1763750000,"m":-1,"b":true,"z":null,"a":[""]}"#
        )
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

    /// Bidirectional controls are escaped too; neighbours of their UTF-8 ranges are not.
    @Test func escapesBidirectionalControls() throws {
        let bidi: [UInt32] = [0x200E, 0x200F, 0x2028, 0x2029, 0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2066, 0x2067, 0x2068, 0x2069]
        for scalar in bidi {
            let value = JSONValue.string("x\(Character(Unicode.Scalar(scalar)!))y")
            let text = value.serialized()
            #expect(text == "\"x\\u\(String(scalar, radix: 16))y\"")
            #expect(try JSONValue(parsing: text) == value)
        }
        for scalar: UInt32 in [0x200D, 0x2010, 0x2027, 0x202F, 0x2065, 0x206A, 0x2014] {
            let value = JSONValue.string("x\(Character(Unicode.Scalar(scalar)!))y")
            #expect(value.serialized() == "\"x\(Character(Unicode.Scalar(scalar)!))y\"")
        }
    }

    @Test func objectEqualityIgnoresOrder() throws {
        let first = try JSONValue(parsing: #"{"a":1,"b":[1,2]}"#)
        let second = try JSONValue(parsing: #"{"b":[1,2],"a":1}"#)
        #expect(first == second)
        #expect(first.hashValue == second.hashValue)
        #expect(first != (try JSONValue(parsing: #"{"b":[2,1],"a":1}"#)))
    }
}
