// jose-benchmark: id_token verifications per second through JOSE, next to OpenSSL's own
// single-core verify rate for the same key types, measured in the same run.
//
// Run it with `scripts/bench-jose` (release build). It exits 1 when a target is missed:
// RS256 ≥ 0.85 × OpenSSL, ES256 and EdDSA ≥ 0.9 × OpenSSL. The verdict compares the best
// rate of each side over the rounds (default 3, `--rounds N`): other processes only ever slow
// a run down, so the best of several runs is the least disturbed estimate, for both sides.
//
// What is timed per iteration ("JOSE"): CompactJWS(parsing:) of the token (split, strict
// base64url of all three parts, strict JSON header) + JWSVerifier.verify (algorithm rules,
// key selection by kid in a three-key set, signature length and range checks, hashing of the
// signing input, OpenSSL verification). "JOSE+claims" adds the payload's JSON parse and every
// id_token claim check (IDTokenValidator.validate); it is reported, not judged.
//
// The reference is `openssl speed -seconds 2 rsa2048 ecdsap256 ed25519` (its verify/s column),
// run in each round. Beside it, "in-process" is the same OpenSSL loop `speed` runs (one
// prepared context, a 20- or 36-byte message), timed here in batches alternating with JOSE's,
// so both see the same load: on a machine other processes share it is the steadier comparison.
//
// `--breakdown` prints where the time goes, stage by stage. `--iterations N [--alg A]` runs a
// fixed amount of work for instruction counting with valgrind.
//
// The keys and tokens come from `--cases FILE`, written by make_cases.py beside this file with
// the test provider's own key code (scripts/bench-jose runs it): three keys per algorithm, a
// realistic Microsoft v2.0 id_token (900 bytes of claims) signed by the second.

import CLibCrypto
import Foundation
import JOSE

let measureSeconds = 2.0
let targets: [JWSAlgorithm: Double] = [.rs256: 0.85, .es256: 0.90, .edDSA: 0.90]

/// Progress goes to stderr; the tables go to stdout.
func progress(_ message: String) {
    FileHandle.standardError.write(Data("jose-benchmark: \(message)\n".utf8))
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("jose-benchmark: \(message)\n".utf8))
    exit(2)
}

func argument(_ name: String) -> String? {
    guard let index = CommandLine.arguments.firstIndex(of: name), index + 1 < CommandLine.arguments.count else { return nil }
    return CommandLine.arguments[index + 1]
}

// MARK: OpenSSL's reference rate

/// Runs `openssl speed` and returns verify/s per algorithm, parsed from its summary table.
func opensslSpeed() -> (rates: [JWSAlgorithm: Double], version: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["openssl", "speed", "-seconds", "2", "rsa2048", "ecdsap256", "ed25519"]
    let output = Pipe()
    process.standardOutput = output
    process.standardError = FileHandle.nullDevice
    do { try process.run() } catch { fail("cannot run openssl: \(error)") }
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    let text = String(decoding: data, as: UTF8.self)
    var rates: [JWSAlgorithm: Double] = [:]
    var version = "OpenSSL"
    for line in text.split(separator: "\n") {
        if line.hasPrefix("version:") { version = "OpenSSL " + line.dropFirst("version:".count).trimmingCharacters(in: .whitespaces) }
        guard let last = line.split(separator: " ").last, let rate = Double(last) else { continue }
        if line.contains("rsa 2048 bits") { rates[.rs256] = rate }
        if line.contains("ecdsa (nistp256)") { rates[.es256] = rate }
        if line.contains("EdDSA (Ed25519)") { rates[.edDSA] = rate }
    }
    guard rates.count == 3 else { fail("could not read openssl speed's verify/s column:\n\(text)") }
    return (rates, version)
}

// MARK: The cases

/// OpenSSL's own verification loop, the way `openssl speed` runs it: one prepared context, a
/// short message, nothing else. Timed in-process beside JOSE as a steadier reference than a
/// separate `openssl speed` run on a busy machine.
final class ReferenceVerifier {
    private let pkeyContext: OpaquePointer?
    private let digestContext: OpaquePointer?
    private var signature: [UInt8] = []
    private let message: [UInt8]

    /// `pem`: the signing key's private PEM, which signs the reference message once.
    init(algorithm: JWSAlgorithm, privateKeyPEM pem: String) {
        let bytes = Array(pem.utf8)
        let key: OpaquePointer? = bytes.withUnsafeBytes { buffer in
            guard let bio = BIO_new_mem_buf(buffer.baseAddress, Int32(buffer.count)) else { return nil }
            defer { BIO_free(bio) }
            return PEM_read_bio_PrivateKey(bio, nil, nil, nil)
        }
        guard let key else { fail("cannot read the \(algorithm) reference key") }
        defer { EVP_PKEY_free(key) }
        if algorithm == .edDSA {
            message = [UInt8](repeating: 0x5A, count: 20)  // speed's EdDSA message length
            digestContext = EVP_MD_CTX_new()
            pkeyContext = nil
            var length = 64
            signature = [UInt8](repeating: 0, count: length)
            guard let signer = EVP_MD_CTX_new() else { fail("EdDSA signing context") }
            defer { EVP_MD_CTX_free(signer) }
            guard EVP_DigestSignInit(signer, nil, nil, nil, key) == 1,
                  EVP_DigestSign(signer, &signature, &length, message, message.count) == 1,
                  let digestContext, EVP_DigestVerifyInit(digestContext, nil, nil, nil, key) == 1
            else { fail("cannot prepare the EdDSA reference") }
        } else {
            // speed signs 36 bytes (RSA) or 20 (ECDSA) without a digest algorithm.
            message = [UInt8](repeating: 0x5A, count: algorithm == .rs256 ? 36 : 20)
            pkeyContext = EVP_PKEY_CTX_new_from_pkey(nil, key, nil)
            digestContext = nil
            guard let signer = EVP_PKEY_CTX_new_from_pkey(nil, key, nil) else { fail("signing context") }
            defer { EVP_PKEY_CTX_free(signer) }
            var length = 0
            guard EVP_PKEY_sign_init(signer) == 1, EVP_PKEY_sign(signer, nil, &length, message, message.count) == 1 else {
                fail("cannot sign the \(algorithm) reference message")
            }
            signature = [UInt8](repeating: 0, count: length)
            guard EVP_PKEY_sign(signer, &signature, &length, message, message.count) == 1,
                  let pkeyContext, EVP_PKEY_verify_init(pkeyContext) == 1
            else { fail("cannot prepare the \(algorithm) reference") }
            signature.removeSubrange(length...)
        }
    }

    deinit {
        if let pkeyContext { EVP_PKEY_CTX_free(pkeyContext) }
        if let digestContext { EVP_MD_CTX_free(digestContext) }
    }

    /// One verification, as `openssl speed` does it; true when it succeeds.
    func verifyOnce() -> Bool {
        if let digestContext {
            return EVP_DigestVerify(digestContext, signature, signature.count, message, message.count) == 1
        }
        return EVP_PKEY_verify(pkeyContext, signature, signature.count, message, message.count) == 1
    }
}

struct Case {
    let algorithm: JWSAlgorithm
    let token: String
    let keys: JWKSet
    let payloadSize: Int
    let reference: ReferenceVerifier
}

/// The cases make_cases.py wrote, with the time and nonce their claims were made for.
func loadCases() -> (now: Int, nonce: String, cases: [Case]) {
    guard let path = argument("--cases"), let data = FileManager.default.contents(atPath: path),
          let document = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
          let now = document["now"] as? Int, let nonce = document["nonce"] as? String,
          let entries = document["cases"] as? [[String: Any]]
    else { fail("needs --cases FILE from Benchmarks/JOSEBenchmark/make_cases.py (scripts/bench-jose runs it)") }
    let cases = entries.map { entry -> Case in
        guard let name = entry["alg"] as? String, let algorithm = JWSAlgorithm(rawValue: name),
              let token = entry["token"] as? String, let jwks = entry["jwks"],
              let jwksData = try? JSONSerialization.data(withJSONObject: jwks),
              let pem = entry["private_key_pem"] as? String, let payloadSize = entry["payload_bytes"] as? Int
        else { fail("a malformed case in \(path)") }
        guard let keys = try? JWKSet(jsonData: Array(jwksData)), keys.keys.count == 3 else { fail("the \(name) key set does not load") }
        return Case(algorithm: algorithm, token: token, keys: keys, payloadSize: payloadSize,
                    reference: ReferenceVerifier(algorithm: algorithm, privateKeyPEM: pem))
    }
    return (now, nonce, cases)
}

// MARK: Measuring

/// Runs `body` repeatedly for `seconds` and returns iterations per second.
func rate(seconds: Double, _ body: () -> Bool) -> Double {
    let clock = ContinuousClock()
    // Warm up: fill the context pools, fault in pages, settle the branch predictors.
    for _ in 0..<200 where !body() { fail("a verification failed during warm-up") }
    var iterations = 0
    let start = clock.now
    let deadline = start + .milliseconds(Int(seconds * 1000))
    var now = start
    while now < deadline {
        for _ in 0..<64 where !body() { fail("a verification failed") }
        iterations += 64
        now = clock.now
    }
    return Double(iterations) / ((now - start) / .seconds(1))
}

func fullRate(_ benchCase: Case, seconds: Double, now: Int) -> Double {
    let validator = IDTokenValidator(
        issuer: IssuerRule(configured: "https://login.microsoftonline.com/{tenantid}/v2.0"),
        clientID: "6731de76-14a6-49ae-97bc-6eba6914391e",
        allowedAlgorithms: [benchCase.algorithm],
        clock: { Date(timeIntervalSince1970: Double(now)) })
    return rate(seconds: seconds) {
        (try? validator.validate(benchCase.token, keys: benchCase.keys, nonce: nonce))?.claims.subject != nil
    }
}

progress("loading keys and tokens …")
let (now, nonce, cases) = loadCases()
let only = argument("--alg").flatMap(JWSAlgorithm.init(rawValue:))

if let iterations = argument("--claims-iterations").flatMap(Int.init) {
    // The id_token claims' JSON parse alone, for profiling the parser.
    guard let payload = try? CompactJWS(parsing: cases[0].token).payload else { fail("the token does not parse") }
    for _ in 0..<iterations where (try? JWTClaims(payload: payload)) == nil { fail("the claims do not parse") }
    exit(0)
}

if let iterations = argument("--validate-iterations").flatMap(Int.init) {
    // IDTokenValidator.validate end to end on the ES256 token, for profiling the claims path.
    let validator = IDTokenValidator(
        issuer: IssuerRule(configured: "https://login.microsoftonline.com/{tenantid}/v2.0"),
        clientID: "6731de76-14a6-49ae-97bc-6eba6914391e", allowedAlgorithms: [.es256],
        clock: { Date(timeIntervalSince1970: Double(now)) })
    guard let payload = try? CompactJWS(parsing: cases[1].token).payload else { fail("the token does not parse") }
    for _ in 0..<iterations {
        guard let claims = try? JWTClaims(payload: payload), (try? validator.validateClaims(claims, nonce: nonce)) != nil else {
            fail("the claims do not validate")
        }
    }
    exit(0)
}

if let iterations = argument("--iterations").flatMap(Int.init) {
    for benchCase in cases where only == nil || only == benchCase.algorithm {
        let verifier = JWSVerifier(allowedAlgorithms: [benchCase.algorithm])
        for _ in 0..<iterations {
            guard let jws = try? CompactJWS(parsing: benchCase.token), (try? verifier.verify(jws, keys: benchCase.keys)) != nil else {
                fail("a verification failed")
            }
        }
    }
    exit(0)
}

/// Times `first` and `second` in alternating batches for `seconds`, so both see the same
/// machine load; returns each one's cost per call in µs.
func interleaved(seconds: Double, _ first: () -> Bool, _ second: () -> Bool) -> (Double, Double) {
    let clock = ContinuousClock()
    for _ in 0..<100 where !first() || !second() { fail("a verification failed during warm-up") }
    var firstTime = Duration.zero, secondTime = Duration.zero, batches = 0
    let deadline = clock.now + .milliseconds(Int(seconds * 1000))
    while clock.now < deadline {
        let start = clock.now
        for _ in 0..<32 where !first() { fail("a verification failed") }
        let middle = clock.now
        for _ in 0..<32 where !second() { fail("a verification failed") }
        secondTime += clock.now - middle
        firstTime += middle - start
        batches += 1
    }
    let calls = Double(batches * 32)
    return (firstTime / .microseconds(1) / calls, secondTime / .microseconds(1) / calls)
}

if CommandLine.arguments.contains("--ab") {
    // OpenSSL's loop against JOSE's whole path, interleaved: the steadiest view of the overhead.
    for benchCase in cases where only == nil || only == benchCase.algorithm {
        let verifier = JWSVerifier(allowedAlgorithms: [benchCase.algorithm])
        let (openssl, jose) = interleaved(seconds: 4) { benchCase.reference.verifyOnce() } _: {
            guard let jws = try? CompactJWS(parsing: benchCase.token) else { return false }
            return (try? verifier.verify(jws, keys: benchCase.keys)) != nil
        }
        print(String(format: "%@: openssl loop %.2f µs, JOSE parse+verify %.2f µs, ratio %.3f", benchCase.algorithm.rawValue, openssl, jose, openssl / jose))
    }
    exit(0)
}

if CommandLine.arguments.contains("--breakdown") {
    print("Cost per token, µs (1 s each; the machine's other load shows in every figure):")
    for benchCase in cases where only == nil || only == benchCase.algorithm {
        let verifier = JWSVerifier(allowedAlgorithms: [benchCase.algorithm])
        guard let parsed = try? CompactJWS(parsing: benchCase.token) else { fail("the token does not parse") }
        let parts = benchCase.token.split(separator: ".").map(String.init)
        let headerBytes = (try? Base64URL.decode(parts[0])) ?? []
        let stages: [(String, () -> Bool)] = [
            ("openssl in-process", { benchCase.reference.verifyOnce() }),
            ("parse", { (try? CompactJWS(parsing: benchCase.token)) != nil }),
            ("  payload base64", { (try? Base64URL.decode(parts[1])) != nil }),
            ("  signature base64", { (try? Base64URL.decode(parts[2])) != nil }),
            ("  header JSON", { (try? JSONValue(parsing: headerBytes)) != nil }),
            ("verify (parsed)", { (try? verifier.verify(parsed, keys: benchCase.keys)) != nil }),
            ("claims JSON", { (try? JWTClaims(payload: parsed.payload)) != nil }),
        ]
        let costs = stages.map { name, body in "\(name) \(String(format: "%.2f", 1e6 / rate(seconds: 1, body)))" }
        print("\(benchCase.algorithm.rawValue): " + costs.joined(separator: ", "))
    }
    exit(0)
}

// MARK: The comparison

let rounds = max(1, argument("--rounds").flatMap(Int.init) ?? 3)
struct Row {
    let algorithm: JWSAlgorithm
    let openssl: Double
    let inProcess: Double
    let jose: Double
    let full: Double
}
var results: [[Row]] = []
var opensslVersion = "OpenSSL"

func pad(_ text: String, _ width: Int) -> String {
    text.count >= width ? text : String(repeating: " ", count: width - text.count) + text
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
}

let header = "alg    openssl speed/s   in-process/s    JOSE/s   ratio  in-proc ratio   JOSE+claims/s"
for round in 1...rounds {
    progress("round \(round) of \(rounds): running `openssl speed -seconds 2 rsa2048 ecdsap256 ed25519` …")
    let (reference, version) = opensslSpeed()
    opensslVersion = version
    var rows: [Row] = []
    for benchCase in cases {
        progress("round \(round) of \(rounds): measuring \(benchCase.algorithm) …")
        let verifier = JWSVerifier(allowedAlgorithms: [benchCase.algorithm])
        let (inProcessCost, joseCost) = interleaved(seconds: 2 * measureSeconds) { benchCase.reference.verifyOnce() } _: {
            guard let jws = try? CompactJWS(parsing: benchCase.token), let verified = try? verifier.verify(jws, keys: benchCase.keys) else {
                return false
            }
            return verified.payload.count == benchCase.payloadSize
        }
        let full = fullRate(benchCase, seconds: measureSeconds / 2, now: now)
        rows.append(Row(
            algorithm: benchCase.algorithm, openssl: reference[benchCase.algorithm] ?? 0, inProcess: 1e6 / inProcessCost,
            jose: 1e6 / joseCost, full: full))
    }
    results.append(rows)
    print("Round \(round):")
    print(header)
    for row in rows {
        print(
            row.algorithm.rawValue.padding(toLength: 6, withPad: " ", startingAt: 0)
                + pad(String(format: "%.1f", row.openssl), 16) + pad(String(format: "%.1f", row.inProcess), 15)
                + pad(String(format: "%.1f", row.jose), 10) + pad(String(format: "%.3f", row.jose / row.openssl), 8)
                + pad(String(format: "%.3f", row.jose / row.inProcess), 15) + pad(String(format: "%.1f", row.full), 16))
    }
}

print("")
print("Verifications per second, one core, \(opensslVersion). Token: \(cases[0].token.utf8.count) bytes (RS256), payload \(cases[0].payloadSize) bytes, 3-key set, key chosen by kid.")
print("JOSE = CompactJWS(parsing:) + JWSVerifier.verify; JOSE+claims = IDTokenValidator.validate (adds the claims JSON and checks).")
print("Verdict: best JOSE/s ÷ best `openssl speed` verify/s over \(rounds) round(s):")
print("alg    best openssl/s   best JOSE/s   ratio   target   result   median ratio   median in-process ratio")
var missed = false
for (index, benchCase) in cases.enumerated() {
    let bestOpenSSL = results.map { $0[index].openssl }.max() ?? 0
    let bestJOSE = results.map { $0[index].jose }.max() ?? 0
    let ratio = bestJOSE / bestOpenSSL
    let medianRatio = median(results.map { $0[index].jose / $0[index].openssl })
    let inProcess = median(results.map { $0[index].jose / $0[index].inProcess })
    let target = targets[benchCase.algorithm] ?? 1
    let ok = ratio >= target
    if !ok { missed = true }
    print(
        benchCase.algorithm.rawValue.padding(toLength: 6, withPad: " ", startingAt: 0)
            + pad(String(format: "%.1f", bestOpenSSL), 15) + pad(String(format: "%.1f", bestJOSE), 14)
            + pad(String(format: "%.3f", ratio), 8) + pad(String(format: "≥ %.2f", target), 9)
            + pad(ok ? "ok" : "MISSED", 9) + pad(String(format: "%.3f", medianRatio), 15) + pad(String(format: "%.3f", inProcess), 26))
}
var load = [Double](repeating: 0, count: 3)
if getloadavg(&load, 3) == 3 {
    print(String(format: "load average at the end: %.2f %.2f %.2f (%d cores)", load[0], load[1], load[2], ProcessInfo.processInfo.activeProcessorCount))
}
exit(missed ? 1 : 0)
