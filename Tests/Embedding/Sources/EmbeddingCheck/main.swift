// Uses libcrypto directly (its own EVP_Digest) and verifies a JWS with authkit's JOSE, in one
// process. Both must work, and each must reach the real libcrypto: exit 0 and one line each.
import CSystemCrypto
import JOSE

#if canImport(Glibc)
import Glibc
#endif

func fail(_ message: String) -> Never {
    print("embedding-check: \(message)")
    exit(1)
}

// 1. The program's own OpenSSL call: SHA-256("abc") (FIPS 180-2 test vector).
var digest = [UInt8](repeating: 0, count: 32)
var length: UInt32 = 0
let input: [UInt8] = Array("abc".utf8)
guard EVP_Digest(input, input.count, &digest, &length, EVP_sha256(), nil) == 1, length == 32 else {
    fail("the program's own EVP_Digest failed")
}
let hex = digest.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
guard hex == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" else {
    fail("the program's own SHA-256 is wrong: \(hex)")
}
print("own libcrypto call: SHA-256(abc) ok (\(String(cString: OpenSSL_version(numericCast(OPENSSL_VERSION)))))")

// 2. authkit's JOSE: RFC 7515 A.2 (RS256), the token and key given as arguments.
let arguments = CommandLine.arguments
guard arguments.count == 3 else { fail("usage: EmbeddingCheck TOKEN JWKS-JSON") }
do {
    let keys = try JWKSet(jsonData: Array(arguments[2].utf8))
    let verified = try JWSVerifier(allowedAlgorithms: [.rs256]).verify(arguments[1], keys: keys)
    print("JOSE: \(verified.algorithm.rawValue) signature verified")
} catch {
    fail("JOSE could not verify the RFC 7515 A.2 token: \(error)")
}
