import StrictJSON
import Testing

@Suite struct JSONErrorTests {
    @Test func describesTheReasonAfterNotValidJSON() {
        let error = JSONError(reason: "unexpected character at byte 3", byteOffset: 3)
        #expect(error.description == "not valid JSON: unexpected character at byte 3")
    }

    @Test(arguments: [
        ("[1,2,x]", 5),
        (#"{"a":1,"a":2}"#, 7),
        ("[1] 2", 4),
        (#"["ab\q"]"#, 5),
    ])
    func offsetIsWhereTheProblemIs(text: String, offset: Int) {
        #expect(throws: JSONError.self) {
            do throws(JSONError) {
                _ = try JSONValue(parsing: text)
            } catch {
                #expect(error.byteOffset == offset)
                #expect(error.reason.hasSuffix(" at byte \(offset)"))
                throw error
            }
        }
    }

    @Test func wholeDocumentErrorsHaveNoOffset() {
        #expect(throws: JSONError(reason: "the document is empty")) { try JSONValue(parsing: " ") }
        #expect(throws: JSONError(reason: "the document is longer than 4 bytes")) {
            try JSONValue(parsing: "[1,2]", limits: JSONLimits(maximumBytes: 4))
        }
    }
}
