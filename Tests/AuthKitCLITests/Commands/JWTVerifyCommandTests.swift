import Foundation
import TestSupport
import Testing

/// `authkit jwt verify` run as a process: the contract scripts rely on (exit codes, one line
/// on stderr, JSON on stdout).
@Suite struct JWTVerifyCommandTests {
    struct Recorded {
        let token: String
        let jwksPath: String
        let issuer: String
        let audience: String
        let issuedAt: Int64
        let expiresAt: Int64
        let directory: URL

        init(_ file: String) throws {
            let data = try Data(contentsOf: TestPaths.fixture("real-world/\(file)"))
            let json = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
            token = try #require(json["token"] as? String)
            issuer = try #require(json["issuer"] as? String)
            audience = try #require(json["audience"] as? String)
            issuedAt = try #require((json["iat"] as? NSNumber)?.int64Value)
            expiresAt = try #require((json["exp"] as? NSNumber)?.int64Value)
            directory = try TestPaths.makeTemporaryDirectory(prefix: "authkit-jwt")
            let jwks = try JSONSerialization.data(withJSONObject: try #require(json["jwks"]))
            jwksPath = directory.appendingPathComponent("keys.json").path
            try jwks.write(to: URL(fileURLWithPath: jwksPath))
        }

        var validArguments: [String] {
            ["jwt", "verify", "--jwks", jwksPath, "--issuer", issuer, "--audience", audience, "--now", String(issuedAt + 60)]
        }
    }

    func authkit(_ arguments: [String], stdin: String? = nil) throws -> ProcessResult {
        let result = try Authkit.run(arguments, environment: ProcessInfo.processInfo.environment, stdin: stdin)
        #expect(!result.timedOut)
        return result
    }

    @Test func printsHeaderAndClaimsOfAValidToken() throws {
        let recorded = try Recorded("microsoft-1.json")
        defer { try? FileManager.default.removeItem(at: recorded.directory) }
        let result = try authkit(recorded.validArguments + [recorded.token])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.isEmpty)
        let output = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect(Set(output.keys) == ["header", "claims"])
        #expect((output["header"] as? [String: Any])?["kid"] as? String == "MnC_VZcATfM5pOYiJHMba9goEKY")
        #expect((output["claims"] as? [String: Any])?["tid"] as? String == "30aa0e58-719c-44f0-b5bb-e131f1f68ab3")
        // Never the signature or the raw token.
        let signature = try #require(recorded.token.split(separator: ".").last)
        #expect(!result.stdout.contains(signature))
        #expect(!result.stdout.contains(recorded.token))
    }

    @Test func readsTheTokenFromStandardInput() throws {
        let recorded = try Recorded("google-2.json")
        defer { try? FileManager.default.removeItem(at: recorded.directory) }
        let piped = try authkit(recorded.validArguments + ["-"], stdin: recorded.token + "\n")
        #expect(piped.status == 0, "\(piped.stderr)")
        let implicit = try authkit(recorded.validArguments, stdin: recorded.token)
        #expect(implicit.status == 0, "\(implicit.stderr)")
        let empty = try authkit(recorded.validArguments, stdin: "")
        #expect(empty.status == 5)
        #expect(empty.stderr == "authkit: token rejected: the token is malformed: the token is empty\n")
    }

    @Test func acceptsATenantTemplateIssuer() throws {
        let recorded = try Recorded("microsoft-3.json")
        defer { try? FileManager.default.removeItem(at: recorded.directory) }
        var arguments = recorded.validArguments
        arguments[arguments.firstIndex(of: recorded.issuer) ?? 0] = "https://sts.windows.net/{tenantid}/"
        let result = try authkit(arguments + [recorded.token])
        #expect(result.status == 0, "\(result.stderr)")
    }

    @Test func exitsFiveForABadSignature() throws {
        let recorded = try Recorded("microsoft-1.json")
        defer { try? FileManager.default.removeItem(at: recorded.directory) }
        var parts = recorded.token.split(separator: ".").map(String.init)
        var signature = Array(parts[2].utf8)
        signature[10] = signature[10] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        parts[2] = String(decoding: signature, as: UTF8.self)
        let result = try authkit(recorded.validArguments + [parts.joined(separator: ".")])
        #expect(result.status == 5)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr == "authkit: token rejected: the signature does not verify with the provider's key\n")
    }

    @Test func exitsSixForAnExpiredToken() throws {
        let recorded = try Recorded("microsoft-1.json")
        defer { try? FileManager.default.removeItem(at: recorded.directory) }
        var arguments = recorded.validArguments
        arguments[arguments.count - 1] = String(recorded.expiresAt + 3600)
        let result = try authkit(arguments + [recorded.token])
        #expect(result.status == 6)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr == "authkit: token rejected: the token expired 3600 s ago; sign in again, or check this machine's clock\n")
        // --leeway widens the window.
        let lenient = try authkit(arguments + ["--leeway", "3601", recorded.token])
        #expect(lenient.status == 0, "\(lenient.stderr)")
    }

    @Test func exitsSixForTheWrongAudienceOrNonce() throws {
        let recorded = try Recorded("apple-1.json")
        defer { try? FileManager.default.removeItem(at: recorded.directory) }
        var arguments = recorded.validArguments
        arguments[arguments.firstIndex(of: recorded.audience) ?? 0] = "com.example.other"
        let audience = try authkit(arguments + [recorded.token])
        #expect(audience.status == 6)
        #expect(
            audience.stderr
                == "authkit: token rejected: the token is not meant for client id com.example.other (aud); check the configured client id\n"
        )
        let nonce = try authkit(recorded.validArguments + ["--nonce", "another-nonce", recorded.token])
        #expect(nonce.status == 6)
        #expect(nonce.stderr.hasPrefix("authkit: token rejected: the token's nonce is not the one sent"))
        let rightNonce = try authkit(recorded.validArguments + ["--nonce", "hTPpgF7XAKbW37rEUS6pEVZqmoI", recorded.token])
        #expect(rightNonce.status == 0, "\(rightNonce.stderr)")
    }

    @Test func exitsFiveForMalformedOrForbiddenTokens() throws {
        let recorded = try Recorded("microsoft-1.json")
        defer { try? FileManager.default.removeItem(at: recorded.directory) }
        let malformed = try authkit(recorded.validArguments + ["not-a-token"])
        #expect(malformed.status == 5)
        #expect(
            malformed.stderr
                == "authkit: token rejected: the token is malformed: a compact JWS has three parts separated by dots; this token has 1\n")
        let payload = recorded.token.split(separator: ".")[1]
        let none = try authkit(recorded.validArguments + ["eyJhbGciOiJub25lIn0.\(payload)."])
        #expect(none.status == 5)
        #expect(none.stderr.hasPrefix("authkit: token rejected: the token's algorithm \"none\" is never accepted"))
        // The claims of a refused token are not echoed.
        #expect(!none.stderr.contains("Brian"))
        #expect(none.stderr.split(separator: "\n").count == 1)
    }

    @Test func exitsTwoForAnUnreadableOrInvalidKeySet() throws {
        let recorded = try Recorded("microsoft-1.json")
        defer { try? FileManager.default.removeItem(at: recorded.directory) }
        var arguments = recorded.validArguments
        let missing = recorded.directory.appendingPathComponent("missing.json").path
        arguments[arguments.firstIndex(of: recorded.jwksPath) ?? 0] = missing
        let unreadable = try authkit(arguments + [recorded.token])
        #expect(unreadable.status == 2)
        #expect(unreadable.stderr == "authkit: cannot read the JWK set \(missing): No such file or directory\n")

        let invalid = recorded.directory.appendingPathComponent("invalid.json")
        try Data("{\"keys\": 5}".utf8).write(to: invalid)
        arguments[arguments.firstIndex(of: missing) ?? 0] = invalid.path
        let notASet = try authkit(arguments + [recorded.token])
        #expect(notASet.status == 2)
        #expect(notASet.stderr == "authkit: \(invalid.path) is not a JWK set: the key set is unusable: it has no keys array\n")
    }

    @Test func refusesBadUsage() throws {
        let recorded = try Recorded("microsoft-1.json")
        defer { try? FileManager.default.removeItem(at: recorded.directory) }
        let noIssuer = try authkit(["jwt", "verify", "--jwks", recorded.jwksPath, recorded.token])
        #expect(noIssuer.status == 2)
        #expect(noIssuer.stderr.contains("--issuer and --audience are required"))
        let hmac = try authkit(recorded.validArguments + ["--alg", "HS256", recorded.token])
        #expect(hmac.status == 2)
        #expect(hmac.stderr.contains("--alg HS256 is never accepted"))
        let negative = try authkit(recorded.validArguments + ["--leeway", "-5", recorded.token])
        #expect(negative.status == 2)
    }

    @Test func checksOnlyTheSignatureWhenAsked() throws {
        let data = try Data(contentsOf: TestPaths.fixture("rfc/rfc8037-a4-eddsa.json"))
        let fixture = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let directory = try TestPaths.makeTemporaryDirectory(prefix: "authkit-jwt")
        defer { try? FileManager.default.removeItem(at: directory) }
        let keys = directory.appendingPathComponent("keys.json")
        try JSONSerialization.data(withJSONObject: try #require(fixture["jwks"])).write(to: keys)
        let token = try #require(fixture["token"] as? String)
        let result = try authkit(["jwt", "verify", "--jwks", keys.path, "--signature-only", "--alg", "EdDSA", token])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "{\"header\":{\"alg\":\"EdDSA\"},\"payload\":\"RXhhbXBsZSBvZiBFZDI1NTE5IHNpZ25pbmc\"}\n")
        // Without --alg EdDSA only RS256 is allowed.
        let refused = try authkit(["jwt", "verify", "--jwks", keys.path, "--signature-only", token])
        #expect(refused.status == 5)
        #expect(refused.stderr.contains("not in the allowed algorithms (RS256)"))
    }

    @Test func helpTeachesByExample() throws {
        let result = try authkit(["jwt", "verify", "--help"])
        #expect(result.status == 0)
        #expect(result.stdout.contains("Example"))
        #expect(result.stdout.contains("--signature-only"))
        #expect(result.stdout.contains("{tenantid}"))
    }
}
