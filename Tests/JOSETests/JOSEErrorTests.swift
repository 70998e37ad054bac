import JOSE
import Testing

@Suite struct JOSEErrorTests {
    @Test func categoriesDriveTheExitCodes() {
        let malformed: [JOSEError] = [
            .tokenTooLarge(limit: 1), .malformedToken("x"), .jsonSerializationUnsupported, .encryptedTokenUnsupported,
            .unencodedPayloadUnsupported, .unknownCriticalHeader("x"), .invalidJSON("x"), .invalidBase64URL,
        ]
        let signatureOrKey: [JOSEError] = [
            .forbiddenAlgorithm("none"), .unsupportedAlgorithm("x"), .algorithmNotAllowed(.es256, allowed: [.rs256]),
            .algorithmKeyMismatch(.rs256, keyID: nil), .unknownKeyID("k"), .keyNotUsable(keyID: "k", reason: .symmetricKey),
            .noSuitableKey(.rs256), .badSignature, .unusableKey(.notAnObject), .invalidKeySet("x"), .cryptoFailure("x"),
        ]
        let claims: [JOSEError] = [
            .invalidClaim("x"), .missingClaim("sub"), .wrongIssuer(expected: "i"), .invalidTenantID, .wrongAudience(expected: "a"),
            .authorizedPartyMismatch(expected: "a"), .expired(bySeconds: 1), .notYetValid(bySeconds: 1), .issuedInFuture(bySeconds: 1),
            .nonceMismatch,
        ]
        #expect(malformed.allSatisfy { $0.category == .malformed })
        #expect(signatureOrKey.allSatisfy { $0.category == .signatureOrKey })
        #expect(claims.allSatisfy { $0.category == .claims })
        #expect((malformed + signatureOrKey + claims).filter(\.isUnknownKeyID) == [.unknownKeyID("k")])
    }

    @Test(arguments: [
        ("RS256", "\"RS256\""),
        ("kid-2024.01_a", "\"kid-2024.01_a\""),
        ("", "(unprintable value)"),
        ("with space", "(unprintable value)"),
        ("\u{1B}[31m", "(unprintable value)"),
        ("quote\"", "(unprintable value)"),
        ("é", "(unprintable value)"),
        (String(repeating: "a", count: 65), "(unprintable value)"),
    ])
    func headerValuesAreShownOnlyWhenHarmless(value: String, shown: String) {
        #expect(JOSEError.printable(value) == shown)
        #expect("\(JOSEError.unknownKeyID(value))".contains(shown))
    }
}
