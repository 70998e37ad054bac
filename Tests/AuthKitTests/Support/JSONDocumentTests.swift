import Foundation
import Testing
@testable import AuthKit

/// One strict reader for every kind of document authkit reads, each with limits that
/// fit it. Every kind refuses the same malformations, each with a message that says why and
/// names no value.
@Suite struct JSONDocumentTests {
    struct Any_: Decodable {
        var a: String?
        var n: Int?
    }

    static let kinds: [JSONDocument] = [
        .discovery, .keySet, .tokenResponse, .tokenError, .deviceAuthorization, .graphPage, .graphError, .storedRecord, .clientConfig,
    ]

    static func malformed(_ kind: JSONDocument) -> [(String, [UInt8], String)] {
        let deep = String(repeating: "[", count: kind.limits.maximumDepth + 1) + String(repeating: "]", count: kind.limits.maximumDepth + 1)
        return [
            ("duplicate member", Array(#"{"a":"secret-one","a":"secret-two"}"#.utf8), "duplicate member name ‘a’"),
            ("trailing data", Array(#"{"a":"x"} {"a":"y"}"#.utf8), "unexpected text after the value"),
            (
                "string over the size limit", Array((#"{"a":""# + String(repeating: "s", count: kind.limits.maximumBytes) + #""}"#).utf8),
                "longer than"
            ),
            ("nesting deeper than the limit", Array(#"{"a":"x","b":"#.utf8) + Array(deep.utf8) + [0x7D], "nested deeper"),
            ("invalid UTF-8", Array(#"{"a":""#.utf8) + [0xC3, 0x28] + Array(#""}"#.utf8), "invalid UTF-8"),
            ("a byte-order mark", [0xEF, 0xBB, 0xBF] + Array(#"{"a":"x"}"#.utf8), "not valid JSON"),
            ("a number out of range", Array(#"{"n":1e400}"#.utf8), "‘n’"),
            ("an integer that is a fraction", Array(#"{"n":2.5}"#.utf8), "‘n’"),
        ]
    }

    @Test(arguments: kinds)
    func everyKindRefusesTheSameMalformations(kind: JSONDocument) {
        for (what, bytes, reason) in Self.malformed(kind) {
            do {
                _ = try kind.decode(Any_.self, from: bytes)
                Issue.record("\(kind): \(what) was accepted")
            } catch {
                #expect(error.reason.contains(reason), "\(kind): \(what): \(error.reason)")
                #expect(!error.reason.contains("secret-"), "\(kind): \(what) quoted a value")
            }
        }
    }

    @Test func limitsFitTheKind() {
        #expect(JSONDocument.tokenResponse.limits.maximumBytes < JSONDocument.storedRecord.limits.maximumBytes)
        #expect(JSONDocument.tokenError.limits.maximumBytes <= 32 << 10)
        #expect(JSONDocument.graphPage.limits.maximumBytes >= 1 << 20)
    }
}

extension JSONDocument: CustomTestStringConvertible {
    public var testDescription: String { "\(self)" }
}
