import Foundation
import JOSE
import TestSupport
import Testing

/// Random and mutated tokens, claims and key sets through the whole parse-and-verify path.
///
/// What must hold for every input: no crash or trap (the test process would die), every
/// failure a `JOSEError`, and nothing accepted that was not validly signed — a mutated token
/// may only verify if it is byte for byte one of the genuine tokens it was made from.
///
/// The inputs are fixed (the RFC and real-world fixtures) and the mutations come from a
/// seeded generator, so a failure reproduces: set `AUTHKIT_FUZZ_SEED` to the seed printed
/// with it. `AUTHKIT_FUZZ_SCALE` multiplies the number of inputs (default 1).
@Suite struct FuzzTests {
    static let seed: UInt64 = ProcessInfo.processInfo.environment["AUTHKIT_FUZZ_SEED"].flatMap { UInt64($0) } ?? 0x5EED_2024_A07C_0DE5
    static let scale = ProcessInfo.processInfo.environment["AUTHKIT_FUZZ_SCALE"].flatMap { Int($0) } ?? 1

    /// Genuine tokens and one key set that verifies all of them.
    struct Corpus {
        let tokens: [String]
        let keySetJSON: String
        let keys: JWKSet

        init() throws {
            var tokens: [String] = []
            var keys: [String] = []
            for file in [
                "rfc/rfc7515-a2-rs256.json", "rfc/rfc7515-a3-es256.json", "rfc/rfc8037-a4-eddsa.json",
                "rfc/rfc7520-4.2-ps384.json", "rfc/rfc7520-4.3-es512.json", "real-world/microsoft-1.json",
            ] {
                let fixture = try fixtureJSON(file)
                tokens.append(try #require(fixture["token"]?.stringValue))
                for key in fixture["jwks"]?["keys"]?.arrayValue ?? [] { keys.append(key.serialized()) }
            }
            self.tokens = tokens
            keySetJSON = JOSETests.keySetJSON(keys)
            self.keys = try JWKSet(jsonData: Array(keySetJSON.utf8))
        }
    }

    static let verifier = JWSVerifier(allowedAlgorithms: Set(JWSAlgorithm.allCases))

    /// Runs one input; returns a failure description, or nil.
    static func check(_ token: [UInt8], corpus: Corpus, keys: JWKSet) -> String? {
        do {
            let jws = try CompactJWS(parsing: token)
            _ = try verifier.verify(jws, keys: keys)
            let text = String(decoding: token, as: UTF8.self)
            return corpus.tokens.contains(text) ? nil : "accepted a token that is not one of the genuine ones"
        } catch {
            // Every failure is typed; make sure its description is built (and never traps).
            _ = error.description
            _ = error.category
            return nil
        }
    }

    @Test func mutatedTokensAreNeverAcceptedAndNeverCrash() throws {
        let corpus = try Corpus()
        var random = SplitMix64(seed: Self.seed)
        let count = 100_000 * Self.scale
        var failures: [String] = []
        for round in 0..<count {
            let base = Array(corpus.tokens[Int(random.next() % UInt64(corpus.tokens.count))].utf8)
            let mutated = Self.mutate(base, corpus: corpus, random: &random)
            if let failure = Self.check(mutated, corpus: corpus, keys: corpus.keys) {
                failures.append("round \(round): \(failure): \(String(decoding: mutated, as: UTF8.self).prefix(200))")
                if failures.count > 5 { break }
            }
        }
        // The genuine tokens themselves still verify (the oracle is not vacuous).
        for token in corpus.tokens { _ = try Self.verifier.verify(token, keys: corpus.keys) }
        #expect(failures.isEmpty, "seed \(Self.seed): \(failures.joined(separator: "\n"))")
        #expect(count >= 100_000)
    }

    @Test func randomKeySetsNeverCrashOrLetAForgeryThrough() throws {
        let corpus = try Corpus()
        var random = SplitMix64(seed: Self.seed ^ 0x4B45_5953)
        let count = 5_000 * Self.scale
        var failures: [String] = []
        for round in 0..<count {
            let document = Self.mutateKeySet(corpus.keySetJSON, random: &random)
            let keys: JWKSet
            do {
                keys = try JWKSet(jsonData: document)
            } catch {
                _ = error.description
                continue
            }
            // Verify a genuine token and a mutated one against whatever set came out.
            let token = Array(corpus.tokens[Int(random.next() % UInt64(corpus.tokens.count))].utf8)
            for candidate in [token, Self.mutate(token, corpus: corpus, random: &random)] {
                if let failure = Self.check(candidate, corpus: corpus, keys: keys) {
                    failures.append("round \(round): \(failure)")
                }
            }
        }
        #expect(failures.isEmpty, "seed \(Self.seed): \(failures.prefix(5).joined(separator: "\n"))")
    }

    /// Claims mutated as JSON text and then validly signed: the validator must never crash,
    /// and what it accepts must pass an independent reading of the claims (Foundation's parser).
    @Test func mutatedClaimsAreValidatedCorrectly() throws {
        let signer = try TestSigner(TestKeys.ed25519, alg: "EdDSA")
        let keys = try keySet([try signer.jwk()])
        let validator = StandardClaims.validator(algorithms: [.edDSA])
        let base = Array(StandardClaims.object().serialized().utf8)
        var random = SplitMix64(seed: Self.seed ^ 0x434C_4149)
        let count = 10_000 * Self.scale
        var failures: [String] = []
        var accepted = 0
        for round in 0..<count {
            let payload = Self.mutateJSON(base, random: &random)
            let token = try signer.token(payload: payload)
            do {
                let validated = try validator.validate(token, keys: keys, nonce: StandardClaims.nonce)
                accepted += 1
                if let problem = Self.independentClaimCheck(payload) {
                    failures.append("round \(round): accepted claims that \(problem): \(String(decoding: payload, as: UTF8.self))")
                }
                _ = validated.claims.json.count
            } catch {
                _ = error.description
            }
        }
        #expect(failures.isEmpty, "seed \(Self.seed): \(failures.prefix(5).joined(separator: "\n"))")
        #expect(accepted > 0, "no mutated claims were valid; the mutations are too coarse to test acceptance")
    }

    // MARK: Mutations

    static func mutate(_ token: [UInt8], corpus: Corpus, random: inout SplitMix64) -> [UInt8] {
        var bytes = token
        switch random.next() % 12 {
        case 0:  // bit flips
            for _ in 0...(random.next() % 3) where !bytes.isEmpty {
                bytes[Int(random.next() % UInt64(bytes.count))] ^= UInt8(1 << (random.next() % 8))
            }
        case 1:  // truncation
            bytes = Array(bytes.prefix(Int(random.next() % UInt64(bytes.count + 1))))
        case 2:  // part swaps and splices between tokens
            let other = Array(corpus.tokens[Int(random.next() % UInt64(corpus.tokens.count))].utf8)
            var mine = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
            let theirs = other.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
            if mine.count == 3, theirs.count == 3 {
                let part = Int(random.next() % 3)
                if random.next() % 2 == 0 { mine[part] = theirs[Int(random.next() % 3)] } else { mine.swapAt(part, (part + 1) % 3) }
            }
            bytes = Array(mine.joined(separator: [UInt8(ascii: ".")]))
        case 3:  // base64 edits: padding, whitespace, foreign characters, deletions, extra dots
            let edits: [[UInt8]] = [[0x3D], [0x3D, 0x3D], [0x20], [0x0A], [0x2B], [0x2F], [0x2E], [0x00], [0xC3, 0xA9], []]
            let position = Int(random.next() % UInt64(bytes.count + 1))
            let edit = edits[Int(random.next() % UInt64(edits.count))]
            if edit.isEmpty, position < bytes.count { bytes.remove(at: position) } else { bytes.insert(contentsOf: edit, at: position) }
        case 4, 5:  // JSON edits of the header, re-encoded, signature kept
            bytes = editPart(bytes, part: 0, random: &random)
        case 6, 7:  // JSON edits of the payload, re-encoded, signature kept
            bytes = editPart(bytes, part: 1, random: &random)
        case 8:  // a chosen hostile header
            let headers = [
                #"{"alg":"none"}"#, #"{"alg":"HS256","kid":"MnC_VZcATfM5pOYiJHMba9goEKY"}"#, #"{"alg":"RS256","crit":["x"],"x":1}"#,
                #"{"alg":"RS256","b64":false,"crit":["b64"]}"#, #"{"alg":"RS256","alg":"none"}"#, #"{"alg":["RS256"]}"#,
                #"{"alg":"ES256","jwk":{"kty":"EC","crv":"P-256","x":"AA","y":"AA"}}"#, #"{"alg":"RS256","kid":{"$ne":null}}"#,
                #"{"alg":"RS256","jku":"https://attacker.example/jwks"}"#, "{\"alg\":\"EdDSA\",\"x\":\(nested(200))}",
            ]
            var parts = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
            if !parts.isEmpty {
                parts[0] = ArraySlice(TestBase64URL.encode(headers[Int(random.next() % UInt64(headers.count))]).utf8)
            }
            bytes = Array(parts.joined(separator: [UInt8(ascii: ".")]))
        case 9:  // random printable text with dots
            bytes = (0..<Int(random.next() % 400)).map { _ in
                let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.=+/ {}\"".utf8)
                return alphabet[Int(random.next() % UInt64(alphabet.count))]
            }
        case 10:  // random bytes
            bytes = (0..<Int(random.next() % 300)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
        default:  // the genuine token, unchanged
            break
        }
        return bytes
    }

    /// Decodes one part, edits it as JSON text, re-encodes it.
    static func editPart(_ token: [UInt8], part: Int, random: inout SplitMix64) -> [UInt8] {
        var parts = token.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 3, let decoded = TestBase64URL.decode(String(decoding: parts[part], as: UTF8.self)) else { return token }
        parts[part] = ArraySlice(TestBase64URL.encode(mutateJSON(decoded, random: &random)).utf8)
        return Array(parts.joined(separator: [UInt8(ascii: ".")]))
    }

    /// Structure-blind and structure-aware edits of JSON text.
    static func mutateJSON(_ json: [UInt8], random: inout SplitMix64) -> [UInt8] {
        var text = json
        let insertions: [String] = [
            #","sub":"x""#, #","aud":"client-1""#, #","aud":["client-1","other"]"#, #","exp":1e999999"#,
            #","exp":-1e400"#, #","iat":99999999999999999999999999"#, ",\"exp\":" + String(repeating: "9", count: 300),
            #","nonce":null"#, #","azp":"client-1""#, #","tid":"../x""#, ",\"deep\":" + nested(100), ",\"deep\":" + nested(20),
            #","x":"\ud800""#, #","x":"\u0000""#, "\u{FEFF}", ",", ":", "\"", "}", "]", "{", "[", "-", "0", "e",
            #","exp":1700003600.999"#, #","exp":"1700003600""#, #","sub":"""#, #","iss":"https://issuer.example.com""#,
        ]
        switch random.next() % 6 {
        case 0, 1:  // insert a fragment just after the opening brace or before the closing one
            let fragment = Array(insertions[Int(random.next() % UInt64(insertions.count))].utf8)
            if random.next() % 2 == 0, let close = text.lastIndex(of: UInt8(ascii: "}")) {
                text.insert(contentsOf: fragment, at: close)
            } else if let open = text.firstIndex(of: UInt8(ascii: "{")) {
                var withComma = fragment
                if withComma.first == UInt8(ascii: ",") {
                    withComma.removeFirst()
                    withComma.append(UInt8(ascii: ","))
                }
                text.insert(contentsOf: withComma, at: open + 1)
            }
        case 2:  // change a digit of a number (times move), or a character of a string
            if !text.isEmpty {
                let position = Int(random.next() % UInt64(text.count))
                if (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(text[position]) {
                    text[position] = UInt8(ascii: "0") + UInt8(random.next() % 10)
                } else {
                    text[position] = UInt8(truncatingIfNeeded: random.next() % 128)
                }
            }
        case 3:  // delete a span
            if !text.isEmpty {
                let start = Int(random.next() % UInt64(text.count))
                let end = min(text.count, start + Int(random.next() % 12))
                text.removeSubrange(start..<end)
            }
        case 4:  // duplicate a span
            if !text.isEmpty {
                let start = Int(random.next() % UInt64(text.count))
                let end = min(text.count, start + Int(random.next() % 30))
                text.insert(contentsOf: text[start..<end], at: end)
            }
        default:  // leave it valid
            break
        }
        return text
    }

    static func nested(_ depth: Int) -> String {
        String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
    }

    // MARK: Key sets

    static func mutateKeySet(_ json: String, random: inout SplitMix64) -> [UInt8] {
        switch random.next() % 4 {
        case 0:
            return mutateJSON(Array(json.utf8), random: &random)
        case 1:  // random members with random values
            let ktys = ["RSA", "EC", "OKP", "oct", "", "rsa"]
            let crvs = ["P-256", "P-384", "P-521", "Ed25519", "Ed448", "X25519", "secp256k1"]
            let algs = ["RS256", "PS384", "ES256", "ES512", "EdDSA", "HS256", "none", "ES521"]
            var members = ["\"kty\":\"\(ktys[Int(random.next() % 6)])\""]
            for name in ["n", "e", "x", "y", "crv", "alg", "kid", "use", "d", "key_ops"] where random.next() % 2 == 0 {
                let value: String
                switch name {
                case "crv": value = "\"\(crvs[Int(random.next() % 7)])\""
                case "alg": value = "\"\(algs[Int(random.next() % 8)])\""
                case "use": value = random.next() % 2 == 0 ? "\"sig\"" : "\"enc\""
                case "key_ops": value = random.next() % 2 == 0 ? "[\"verify\"]" : "\"verify\""
                case "kid": value = "\"MnC_VZcATfM5pOYiJHMba9goEKY\""
                default:
                    let length = [0, 1, 3, 31, 32, 33, 48, 65, 66, 67, 128, 255, 256, 257, 512][Int(random.next() % 15)]
                    value = "\"" + TestBase64URL.encode((0..<length).map { _ in UInt8(truncatingIfNeeded: random.next()) }) + "\""
                }
                members.append("\"\(name)\":\(value)")
            }
            return Array("{\"keys\":[{\(members.joined(separator: ","))}]}".utf8)
        case 2:  // a real key with one member's value corrupted by a bit flip
            var bytes = Array(json.utf8)
            bytes[Int(random.next() % UInt64(bytes.count))] ^= UInt8(1 << (random.next() % 8))
            return bytes
        default:
            return (0..<Int(random.next() % 200)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
        }
    }

    // MARK: An independent reading of accepted claims

    static func number(_ value: Any?) -> Double? {
        if value is Bool { return nil }
        if let double = value as? Double { return double }
        if let int = value as? Int { return Double(int) }
        return (value as? NSNumber)?.doubleValue
    }

    static func independentClaimCheck(_ payload: [UInt8]) -> String? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any] else {
            return "Foundation cannot parse"
        }
        guard object["iss"] as? String == StandardClaims.issuer else { return "have the wrong iss" }
        guard let sub = object["sub"] as? String, !sub.isEmpty else { return "have no sub" }
        let audience = (object["aud"] as? String).map { [$0] } ?? (object["aud"] as? [String]) ?? []
        guard audience.contains(StandardClaims.clientID) else { return "have the wrong aud" }
        guard let exp = number(object["exp"]), exp + 120 > Double(StandardClaims.now) else { return "are expired" }
        guard let iat = number(object["iat"]), iat <= Double(StandardClaims.now) + 120 else { return "were issued later" }
        if let nbf = number(object["nbf"]), nbf > Double(StandardClaims.now) + 120 { return "are not yet valid" }
        guard object["nonce"] as? String == StandardClaims.nonce else { return "have the wrong nonce" }
        if audience.count > 1 || object["azp"] != nil, object["azp"] as? String != StandardClaims.clientID { return "have the wrong azp" }
        return nil
    }
}
