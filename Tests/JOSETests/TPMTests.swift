import Foundation
import JOSE
import TestSupport
import Testing

/// A signing key in a TPM: Debian's swtpm, reached by tpm2-openssl as a real TPM would be.
@Suite(.enabled(if: SoftwareTPM.isAvailable, "swtpm and tpm2-openssl are not installed (scripts/bootstrap installs them)"))
struct TPMTests {
    func verifies(_ token: String, with key: JWK) -> Bool {
        (try? JWSVerifier(allowedAlgorithms: [.es256]).verify(token, keys: JWKSet(keys: [key]))) != nil
    }

    @Test func aKeyMadeInTheTPMSignsAndOnlyItsBlobLeaves() async throws {
        let software = try await SoftwareTPM()
        let tpm = try TPM.open(tcti: software.tcti)
        let key = try SigningKey.generate(in: tpm)
        #expect(key.location == .tpm)
        #expect(key.privateJWK == nil)
        let blob = try #require(key.tpmBlob)
        #expect(String(decoding: blob, as: UTF8.self).hasPrefix("-----BEGIN TSS2 PRIVATE KEY-----"))
        let token = try key.compactJWS(header: JSONObject(), payload: ["n": .number(1)])
        #expect(verifies(token, with: key.publicKey))
        // The blob loads again in the same TPM as the same key.
        let loaded = try SigningKey(tpmBlob: blob, tpm: tpm)
        #expect(try loaded.publicKey.thumbprint() == key.publicKey.thumbprint())
        #expect(verifies(try loaded.compactJWS(header: JSONObject(), payload: JSONObject()), with: key.publicKey))
        await software.stop()
    }

    @Test func anotherTPMDoesNotLoadTheBlob() async throws {
        let first = try await SoftwareTPM()
        let second = try await SoftwareTPM()
        let blob = try #require(try SigningKey.generate(in: TPM.open(tcti: first.tcti)).tpmBlob)
        let other = try TPM.open(tcti: second.tcti)
        #expect {
            try SigningKey(tpmBlob: blob, tpm: other)
        } throws: { error in
            guard case JOSEError.signingKey(let reason) = error else { return false }
            return reason.contains("another TPM")
        }
        #expect(throws: JOSEError.self) { try SigningKey(tpmBlob: Array("not a key".utf8), tpm: other) }
        await first.stop()
        await second.stop()
    }

    @Test func signsFromManyTasksAtOnce() async throws {
        let software = try await SoftwareTPM()
        let tpm = try TPM.open(tcti: software.tcti)
        let key = try SigningKey.generate(in: tpm)
        // Two objects of the same key (two tools read the same stored blob), signing at once:
        // one TPM command at a time across keys, not per key.
        let twin = try SigningKey(tpmBlob: try #require(key.tpmBlob), tpm: tpm)
        let tokens = try await withThrowingTaskGroup(of: String.self) { group in
            for index in 0..<16 {
                let signer = index.isMultiple(of: 2) ? key : twin
                group.addTask { try signer.compactJWS(header: JSONObject(), payload: ["i": .number(JSONNumber(index))]) }
            }
            return try await group.reduce(into: [String]()) { $0.append($1) }
        }
        #expect(tokens.count == 16)
        #expect(tokens.allSatisfy { verifies($0, with: key.publicKey) })
        await software.stop()
    }

    @Test func aMissingTPMIsSaidPlainly() {
        #expect(throws: JOSEError.signingKey("there is no TPM (/nonexistent/tpmrm0 does not exist)")) {
            try TPM.open(tcti: "device:/nonexistent/tpmrm0")
        }
    }
}
