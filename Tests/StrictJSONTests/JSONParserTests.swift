import StrictJSON
import Testing

@Suite struct JSONParserTests {
    @Test func parsesLongStringsAroundTheEightByteScan() throws {
        for length in 0..<40 {
            let content = String(repeating: "a", count: length)
            #expect(try JSONValue(parsing: "[\"\(content)\"]").arrayValue?.first?.stringValue == content)
            #expect(try JSONValue(parsing: "[\"\(content)é\\n\(content)\"]").arrayValue?.first?.stringValue == content + "é\n" + content)
            #expect(throws: JSONError.self) { try JSONValue(parsing: "[\"\(content)\u{01}\(content)\"]") }
            #expect(throws: JSONError.self) { try JSONValue(parsing: "[\"\(content)") }
            #expect(throws: JSONError.self) { try JSONValue(parsing: [0x5B, 0x22] + Array(content.utf8) + [0xFF, 0x22, 0x5D]) }
        }
    }

    @Test func parsesEveryKindOfValue() throws {
        let value = try JSONValue(parsing: #" { "a" : [1, -2.5e3, true, false, null, "x\u00e9\ud83d\ude00\n"], "b": {} } "#)
        #expect(value["a"]?.arrayValue?.count == 6)
        #expect(value["a"]?.arrayValue?[0].int64Value == 1)
        #expect(value["a"]?.arrayValue?[1].doubleValue == -2500)
        #expect(value["a"]?.arrayValue?[1].numberValue?.text == "-2.5e3")
        #expect(value["a"]?.arrayValue?[2] == .bool(true))
        #expect(value["a"]?.arrayValue?[4] == .null)
        #expect(value["a"]?.arrayValue?[5].stringValue == "xé😀\n")
        #expect(value["b"]?.objectValue?.isEmpty == true)
        #expect(value.objectValue?.keys == ["a", "b"])
    }

    @Test func keepsNumbersExactly() throws {
        let value = try JSONValue(parsing: "[9007199254740993, 1.5e9, 1470148361.25, 0, -0]")
        let numbers = try #require(value.arrayValue)
        #expect(numbers[0].int64Value == 9_007_199_254_740_993)  // 2^53 + 1: a Double would round it
        #expect(numbers[1].int64Value == 1_500_000_000)
        #expect(numbers[2].int64Value == nil)
        #expect(numbers[2].doubleValue == 1_470_148_361.25)
        #expect(numbers[4].numberValue?.text == "-0")
    }

    @Test(arguments: [
        (#"{"a":1,"a":2}"#, "duplicate member name"),
        (#"{"sub":"x","aud":"y","sub":"z"}"#, "duplicate member name"),
        (#"{"a":1}x"#, "unexpected text after the value"),
        (#"{"a":1,}"#, "expected a member name"),
        ("[1,]", "unexpected character"),
        ("[01]", "expected , or ]"),
        ("[1.]", "malformed number"),
        ("[.5]", "unexpected character"),
        ("[+1]", "unexpected character"),
        ("[NaN]", "unexpected character"),
        ("[Infinity]", "unexpected character"),
        ("[tru]", "unknown literal"),
        (#"["\x"]"#, "unknown escape sequence"),
        (#"["\ud800"]"#, "lone surrogate"),
        (#"["\udc00"]"#, "lone surrogate"),
        (#"["\ud800\u0041"]"#, "lone surrogate"),
        ("[\"a\tb\"]", "unescaped control character"),
        ("\u{FEFF}{}", "unexpected character"),
        ("// c\n{}", "unexpected character"),
        ("{'a':1}", "expected a member name"),
        ("", "the document is empty"),
        ("   ", "the document is empty"),
        (#"{"a""#, "expected :"),
        (#"{"a" 1}"#, "expected :"),
        (#"["abc"#, "unterminated string"),
        ("{", "expected a member name"),
        ("[", "unexpected end of the document"),
        ("[1", "unterminated array"),
        ("1 2", "unexpected text after the value"),
        (#""\ud834""#, "lone surrogate"),
    ])
    func refusesNonStrictJSON(text: String, reason: String) {
        do throws(JSONError) {
            let value = try JSONValue(parsing: text)
            Issue.record("accepted \(value)")
        } catch {
            #expect(error.reason.contains(reason), "\(error)")
        }
    }

    @Test func refusesInvalidUTF8() {
        let bytes: [UInt8] = [0x22, 0xC3, 0x28, 0x22]  // "\xC3(" : a broken two-byte sequence
        #expect(throws: JSONError.self) { try JSONValue(parsing: bytes) }
        let overlong: [UInt8] = [0x22, 0xC0, 0xAF, 0x22]
        #expect(throws: JSONError.self) { try JSONValue(parsing: overlong) }
    }

    @Test func boundsDepthAndSize() throws {
        let deep = String(repeating: "[", count: 65) + String(repeating: "]", count: 65)
        #expect(throws: JSONError.self) { try JSONValue(parsing: deep) }
        let fine = String(repeating: "[", count: 64) + String(repeating: "]", count: 64)
        _ = try JSONValue(parsing: fine)
        #expect(throws: JSONError(reason: "the document is longer than 10 bytes")) {
            try JSONValue(parsing: "[1,2,3,4,5,6]", limits: JSONLimits(maximumBytes: 10))
        }
        let hugeNumber = "[" + String(repeating: "9", count: 300) + "]"
        #expect(throws: JSONError.self) { try JSONValue(parsing: hugeNumber) }
    }

    @Test(arguments: [3, 40, 63, 64, 65, 200])
    func findsDuplicatesInObjectsOfEverySize(size: Int) throws {
        var members = (0..<size).map { "\"m\($0)\":{\"m\($0)\":[{\"x\":1,\"y\":2}]}" }
        let parsed = try JSONValue(parsing: "{" + members.joined(separator: ",") + "}")
        #expect(parsed.objectValue?.count == size)
        for duplicate in [0, size / 2, size - 1] {
            var withDuplicate = members
            withDuplicate.append("\"m\(duplicate)\":0")
            #expect(throws: JSONError.self) { try JSONValue(parsing: "{" + withDuplicate.joined(separator: ",") + "}") }
        }
        // A duplicate inside a nested object, after the outer object has many members.
        members.append(#""inner":{"a":1,"b":2,"a":3}"#)
        #expect(throws: JSONError.self) { try JSONValue(parsing: "{" + members.joined(separator: ",") + "}") }
    }

    @Test func findsDuplicatesInLargeObjects() throws {
        var members = (0..<40).map { "\"m\($0)\":\($0)" }
        _ = try JSONValue(parsing: "{" + members.joined(separator: ",") + "}")
        members.append("\"m3\":0")
        #expect(throws: JSONError.self) { try JSONValue(parsing: "{" + members.joined(separator: ",") + "}") }
        // The same name written with an escape is the same name.
        #expect(throws: JSONError.self) { try JSONValue(parsing: #"{"alg":1,"\u0061lg":2}"#) }
    }

    @Test func errorsNameOffsetsNotContent() {
        do throws(JSONError) {
            let value = try JSONValue(parsing: #"{"secret-claim":"hunter2","secret-claim":"x"}"#)
            Issue.record("accepted \(value)")
        } catch {
            #expect(!"\(error)".contains("hunter2"))
            // A field-like name is named (which field was doubled), a value never.
            #expect(error.reason == "duplicate member name ‘secret-claim’ at byte 26")
            #expect(error.byteOffset == 26)  // the second name's opening quote
        }
    }

    /// A doubled name that does not look like a field is not repeated in the message.
    @Test(arguments: ["a\\u001b]52;c;eA==\\u0007", String(repeating: "n", count: 41), "has space", "\\u00e9t\\u00e9"])
    func doesNotRepeatAnOddMemberName(name: String) {
        do throws(JSONError) {
            _ = try JSONValue(parsing: "{\"\(name)\":1,\"\(name)\":2}")
            Issue.record("accepted")
        } catch {
            #expect(error.reason.hasPrefix("duplicate member name (not shown) at byte"))
        }
    }

    @Test func parsesAnyValueAtTheTopAndEveryEscape() throws {
        // RFC 8259 allows any value as the document, not only an object or array.
        #expect(try JSONValue(parsing: "1") == 1)
        #expect(try JSONValue(parsing: " null\n") == .null)
        #expect(try JSONValue(parsing: "true") == true)
        #expect(try JSONValue(parsing: #""\u00e9\ud834\udd1e\/\b\f\r\t\"\\""#) == .string("é𝄞/\u{8}\u{C}\r\t\"\\"))
    }
}
