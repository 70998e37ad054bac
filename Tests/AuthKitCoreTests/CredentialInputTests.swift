import AuthKitCore
import Testing

/// `CredentialInput`: what a plug-in takes on standard input.
@Suite struct CredentialInputTests {
    @Test func aRequestIsBoundedUTF8TextWithoutNUL() {
        #expect(CredentialInput.text(Array("host=a\n".utf8)) == .success("host=a\n"))
        #expect(CredentialInput.text([]) == .success(""))
        #expect(CredentialInput.text(Array(repeating: 0x61, count: CredentialInput.maximumBytes + 1)) == .failure(.tooLong))
        #expect(CredentialInput.text([0x61, 0, 0x0A]) == .failure(.nul))
        #expect(CredentialInput.text([0x61, 0xFF, 0x0A]) == .failure(.notUTF8))
        let long = Array(repeating: UInt8(ascii: "a"), count: CredentialInput.maximumLineBytes + 1)
        #expect(CredentialInput.text(long + [0x0A]) == .failure(.longLine))
        #expect(CredentialInput.text(Array(long.dropLast()) + [0x0A] + Array(long.dropLast())) != .failure(.longLine))
        // CRLF ends a line too (Swift reads it as one character, not as "\n").
        let crlf = Array(repeating: Array("ab\r\n".utf8), count: CredentialInput.maximumLineBytes / 4 + 1).flatMap { $0 }
        #expect(CredentialInput.text(crlf) != .failure(.longLine))
        #expect(CredentialInput.text(Array(long.dropLast()) + Array("x\r\n".utf8)) == .failure(.longLine))
    }
}
