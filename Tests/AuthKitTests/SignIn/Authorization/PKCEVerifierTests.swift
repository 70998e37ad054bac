import Testing
@testable import AuthKit

@Suite("PKCEVerifier")
struct PKCEVerifierTests {
    @Test("S256 challenge matches RFC 7636 Appendix B")
    func rfc7636AppendixB() throws {
        let verifier = try PKCEVerifier(validating: "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")
        #expect(verifier.challenge == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")
        #expect(verifier.challengeMethod == "S256")
    }

    @Test("fresh verifiers are 43–128 unreserved characters and never repeat")
    func freshVerifiers() throws {
        var seen = Set<String>()
        for byteCount in [32, 64, 96] {
            let verifier = try PKCEVerifier(byteCount: byteCount)
            #expect((43...128).contains(verifier.value.count))
            #expect(verifier.value.allSatisfy { $0.isLetter || $0.isNumber || "-._~".contains($0) })
            #expect(seen.insert(verifier.value).inserted)
        }
        #expect(try PKCEVerifier(byteCount: 32).value.count == 43)
        #expect(try PKCEVerifier(byteCount: 96).value.count == 128)
        #expect(throws: AuthorizationError.self) { _ = try PKCEVerifier(byteCount: 31) }
        #expect(throws: AuthorizationError.self) { _ = try PKCEVerifier(byteCount: 97) }
    }

    @Test("the verifier never shows up in descriptions")
    func redacted() throws {
        let verifier = try PKCEVerifier()
        #expect(!"\(verifier)".contains(verifier.value))
        #expect(!String(reflecting: verifier).contains(verifier.value))
        var dumped = ""
        dump(verifier, to: &dumped)
        #expect(!dumped.contains(verifier.value))
    }

    @Test(
        "verifiers of the wrong length or alphabet are refused",
        arguments: [
            "short", String(repeating: "a", count: 42), String(repeating: "a", count: 129),
            String(repeating: "a", count: 42) + "+", String(repeating: "a", count: 42) + "é",
        ])
    func invalid(_ value: String) {
        #expect(throws: AuthorizationError.self) { _ = try PKCEVerifier(validating: value) }
    }
}
