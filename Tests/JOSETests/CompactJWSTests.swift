import JOSE
import TestSupport
import Testing

@Suite struct CompactJWSTests {
    let header = TestBase64URL.encode(#"{"alg":"RS256","kid":"k1"}"#)
    let payload = TestBase64URL.encode(#"{"sub":"x"}"#)
    let signature = TestBase64URL.encode([1, 2, 3, 4])

    @Test func parsesTheThreeParts() throws {
        let token = "\(header).\(payload).\(signature)"
        let jws = try CompactJWS(parsing: token)
        #expect(jws.header.algorithm == "RS256")
        #expect(jws.header.keyID == "k1")
        #expect(jws.payload == Array(#"{"sub":"x"}"#.utf8))
        #expect(jws.signature == [1, 2, 3, 4])
        #expect(jws.signingInput == Array("\(header).\(payload)".utf8))
        // The same through bytes and a substring.
        #expect(try CompactJWS(parsing: Array(token.utf8)).signingInput == jws.signingInput)
        #expect(try CompactJWS(parsing: ("x" + token).dropFirst()).payload == jws.payload)
    }

    @Test func allowsAnEmptyPayload() throws {
        #expect(try CompactJWS(parsing: "\(header)..\(signature)").payload.isEmpty)
    }

    @Test(arguments: [1, 2, 4, 6])
    func refusesOtherPartCounts(parts: Int) {
        let token = Array(repeating: header, count: parts).joined(separator: ".")
        #expect(throws: JOSEError.malformedToken("a compact JWS has three parts separated by dots; this token has \(parts)")) {
            try CompactJWS(parsing: token)
        }
    }

    @Test func refusesEncryptedTokens() {
        #expect(throws: JOSEError.encryptedTokenUnsupported) {
            try CompactJWS(parsing: "\(header).a.b.c.d")
        }
    }

    @Test func refusesTheJSONSerialization() {
        #expect(throws: JOSEError.jsonSerializationUnsupported) {
            try CompactJWS(parsing: #"{"payload":"\#(payload)","signatures":[]}"#)
        }
    }

    @Test func refusesOversizedTokens() {
        let big = String(repeating: "A", count: CompactJWS.maximumTokenSize + 1)
        #expect(throws: JOSEError.tokenTooLarge(limit: CompactJWS.maximumTokenSize)) { try CompactJWS(parsing: big) }
    }

    @Test(arguments: [
        ("", "the token is empty"),
        (".x.y", "the header is empty"),
        ("e30=.x.y", "the header is not strict base64url"),
        ("e30 .x.y", "the header is not strict base64url"),
    ])
    func refusesMalformedStructure(token: String, reason: String) {
        #expect(throws: JOSEError.malformedToken(reason)) { try CompactJWS(parsing: token) }
    }

    @Test func refusesBadPartsAfterTheHeader() {
        #expect(throws: JOSEError.malformedToken("the payload is not strict base64url")) {
            try CompactJWS(parsing: "\(header).\(payload)=.\(signature)")
        }
        #expect(throws: JOSEError.malformedToken("the signature is not strict base64url")) {
            try CompactJWS(parsing: "\(header).\(payload).\(signature)+")
        }
    }

    @Test(arguments: [
        (#"[]"#, "the header is not a JSON object"),
        (#""RS256""#, "the header is not a JSON object"),
        (#"{"kid":"k"}"#, "the header has no alg"),
        (#"{"alg":256}"#, "the header's alg is not a string"),
        (#"{"alg":"RS256","kid":7}"#, "the header's kid is not a string"),
        (#"{"alg":"RS256","typ":null}"#, "the header's typ is not a string"),
        (#"{"alg":"RS256","b64":"no"}"#, "the header's b64 is not a Boolean"),
        (#"{"alg":"RS256","crit":[]}"#, "the header's crit is not a non-empty array"),
        (#"{"alg":"RS256","crit":"exp"}"#, "the header's crit is not a non-empty array"),
        (#"{"alg":"RS256","crit":[1],"x":1}"#, "the header's crit lists a non-string"),
        (#"{"alg":"RS256","crit":["alg"]}"#, "the header's crit lists a standard parameter"),
        (#"{"alg":"RS256","crit":["exp"]}"#, "the header's crit lists a parameter the header does not have"),
        (#"{"alg":"RS256","crit":["b64","b64"],"b64":true}"#, "the header's crit lists a name twice"),
    ])
    func refusesMalformedHeaders(json: String, reason: String) {
        let token = "\(TestBase64URL.encode(json)).\(payload).\(signature)"
        #expect(throws: JOSEError.malformedToken(reason)) { try CompactJWS(parsing: token) }
    }

    @Test func refusesDuplicateHeaderMembers() {
        let token = "\(TestBase64URL.encode(#"{"alg":"RS256","alg":"none"}"#)).\(payload).\(signature)"
        #expect(throws: JOSEError.malformedToken("the header is not valid JSON: duplicate member name ‘alg’ at byte 15")) {
            try CompactJWS(parsing: token)
        }
    }

    @Test func refusesUnknownCriticalExtensions() {
        let token = "\(TestBase64URL.encode(#"{"alg":"RS256","crit":["exp"],"exp":1}"#)).\(payload).\(signature)"
        #expect(throws: JOSEError.unknownCriticalHeader("exp")) { try CompactJWS(parsing: token) }
    }

    @Test func refusesUnencodedPayloads() throws {
        let token = "\(TestBase64URL.encode(#"{"alg":"RS256","b64":false,"crit":["b64"]}"#)).\(payload).\(signature)"
        #expect(throws: JOSEError.unencodedPayloadUnsupported) { try CompactJWS(parsing: token) }
        // b64 true changes nothing and is understood when critical.
        let plain = "\(TestBase64URL.encode(#"{"alg":"RS256","b64":true,"crit":["b64"]}"#)).\(payload).\(signature)"
        #expect(try CompactJWS(parsing: plain).header.critical == ["b64"])
    }

    @Test func neverPrintsItsContents() throws {
        let secretPayload = TestBase64URL.encode(#"{"sub":"very-secret-subject"}"#)
        let jws = try CompactJWS(parsing: "\(header).\(secretPayload).\(signature)")
        for text in [String(describing: jws), String(reflecting: jws), "\(jws)"] {
            #expect(!text.contains("very-secret-subject"))
            #expect(!text.contains(secretPayload))
        }
        var dumped = ""
        dump(jws, to: &dumped)
        #expect(!dumped.contains("very-secret"))
        #expect(!dumped.contains("118"))  // no byte values of the payload
    }
}
