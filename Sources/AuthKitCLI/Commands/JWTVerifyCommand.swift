import ArgumentParser
import JOSE

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// `authkit jwt verify`: checks a token's signature against a JWK set, then its id_token claims.
///
/// The contract for scripts and tests: exit 0 and `{"header":…,"claims":…}` on stdout when the
/// token is valid; exit 5 (malformed, or signature/key refused) or 6 (claims refused) with one
/// line on stderr naming the reason; exit 2 for usage errors and an unreadable JWK set.
struct JWTVerifyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Verify a JWT's signature against a JWK set, then its id_token claims.",
        usage: "authkit jwt verify --jwks <file> [<options>] [<token> | -]",
        discussion: """
            Checks TOKEN's signature with the keys in the JWK set FILE (the document at the \
            provider's jwks_uri) and then, unless --signature-only, checks it as an OpenID Connect \
            id_token: iss, sub, aud, azp, exp, iat, nbf, and nonce when --nonce is given. The token \
            is read from standard input when TOKEN is - or left out.

            Only RS256 is accepted unless --alg names the algorithms to accept (repeat it for \
            several). none and HS256/HS384/HS512 are never accepted. The key comes from FILE only, \
            chosen by the token's kid; a token without kid is tried against every key that fits \
            its algorithm.

            On success the token's header and claims are printed as JSON (never its signature). \
            Exit status: 0 valid; 5 malformed, or its algorithm, key or signature refused; 6 \
            signature good but claims refused (expired, wrong audience …); 2 usage error or an \
            unreadable JWK set.

            Example, with keys.json saved from the provider's jwks_uri (for Microsoft's \
            common endpoint https://login.microsoftonline.com/common/discovery/v2.0/keys):
              authkit jwt verify --jwks keys.json \\
                  --issuer 'https://login.microsoftonline.com/{tenantid}/v2.0' \\
                  --audience 6731de76-14a6-49ae-97bc-6eba6914391e < id_token.txt
            """
    )

    @Option(name: .long, help: ArgumentHelp("The provider's JWK set, as JSON.", valueName: "file"))
    var jwks: String

    @Option(
        help: ArgumentHelp(
            "The issuer iss must equal; {tenantid} in it is filled from the token's tid (Microsoft's common endpoints).",
            valueName: "iss"))
    var issuer: String?

    @Option(help: ArgumentHelp("Your client id, which aud must contain.", valueName: "client-id"))
    var audience: String?

    @Option(help: ArgumentHelp("The nonce sent with the sign-in request; nonce must equal it.", valueName: "nonce"))
    var nonce: String?

    @Option(help: ArgumentHelp("Check times as if it were this moment (seconds since 1970).", valueName: "unix-seconds"))
    var now: Int64?

    @Option(help: ArgumentHelp("Allowed clock skew for exp, nbf and iat, in seconds.", valueName: "seconds"))
    var leeway: Int64 = 120

    @Option(
        name: .customLong("alg"),
        help: ArgumentHelp(
            "An algorithm to accept (repeatable): RS256 RS384 RS512 PS256 PS384 PS512 ES256 ES384 ES512 EdDSA. Default: RS256.",
            valueName: "alg"))
    var algorithms: [String] = []

    @Flag(help: "Check only the signature and key rules, not id_token claims (for tokens that are not id_tokens).")
    var signatureOnly = false

    @Argument(help: ArgumentHelp("The token, or - to read it from standard input.", valueName: "token"))
    var token: String?

    func validate() throws {
        if !signatureOnly {
            guard issuer != nil, audience != nil else {
                throw ValidationError("--issuer and --audience are required (or pass --signature-only).")
            }
        }
        guard leeway >= 0 else { throw ValidationError("--leeway must not be negative.") }
        for name in algorithms {
            if name == "none" || name.hasPrefix("HS") {
                throw ValidationError("--alg \(name) is never accepted: authkit verifies provider signatures with public keys only.")
            }
            guard JWSAlgorithm(rawValue: name) != nil else {
                throw ValidationError("--alg \(name) is not one of \(JWSAlgorithm.allCases.map(\.rawValue).joined(separator: " ")).")
            }
        }
    }

    func run() throws {
        let keys = try readKeySet()
        let token = try readToken()
        let allowed: Set<JWSAlgorithm> = algorithms.isEmpty ? [.rs256] : Set(algorithms.compactMap(JWSAlgorithm.init(rawValue:)))
        do {
            var output = JSONObject()
            if signatureOnly {
                let verified = try JWSVerifier(allowedAlgorithms: allowed).verify(try CompactJWS(parsing: token), keys: keys)
                output["header"] = .object(verified.header.json)
                if let claims = try? JSONValue(parsing: verified.payload), case .object = claims {
                    output["claims"] = claims
                } else {
                    output["payload"] = .string(Base64URL.encode(verified.payload))
                }
            } else {
                let fixedNow = now
                let validator = IDTokenValidator(
                    issuer: IssuerRule(configured: issuer ?? ""),
                    clientID: audience ?? "",
                    allowedAlgorithms: allowed,
                    leeway: .seconds(leeway),
                    clock: { fixedNow.map { Date(timeIntervalSince1970: Double($0)) } ?? Date() })
                let validated = try validator.validate(token, keys: keys, nonce: nonce)
                output["header"] = .object(validated.header.json)
                output["claims"] = .object(validated.claims.json)
            }
            Terminal.printData(JSONValue.object(output).serialized())
        } catch {
            Terminal.printError("authkit: token rejected: \(error)")
            throw error.category == .claims ? ExitStatus.claimsRejected : ExitStatus.signatureRejected
        }
    }

    private func readKeySet() throws -> JWKSet {
        let bytes: [UInt8]
        do {
            bytes = try InputFile.read(path: jwks, limit: JWKSet.maximumSize)
        } catch {
            Terminal.printError("authkit: cannot read the JWK set \(jwks): \(error)")
            throw ExitStatus.usage
        }
        do {
            return try JWKSet(jsonData: bytes)
        } catch {
            Terminal.printError("authkit: \(jwks) is not a JWK set: \(error)")
            throw ExitStatus.usage
        }
    }

    private func readToken() throws -> String {
        if let token, token != "-" { return token }
        if token == nil, isatty(0) == 1 {
            Terminal.printError("authkit: no token given: pass it as an argument, or on standard input (… | authkit jwt verify … -)")
            throw ExitStatus.usage
        }
        var bytes: [UInt8]
        do {
            bytes = try InputFile.read(descriptor: 0, limit: CompactJWS.maximumTokenSize + 2)
        } catch {
            Terminal.printError("authkit: cannot read the token from standard input: \(error)")
            throw ExitStatus.usage
        }
        // One trailing newline (from echo or a file) is not part of the token; anything else is.
        if bytes.last == 0x0A { bytes.removeLast() }
        if bytes.last == 0x0D { bytes.removeLast() }
        return String(decoding: bytes, as: UTF8.self)
    }
}
