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

import Foundation
import JOSE
import TestSupport

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

// MARK: A realistic id_token

/// A Microsoft v2.0 id_token's claims: 900 bytes of JSON.
func realisticClaims(now: Int) -> String {
    """
    {"aud":"6731de76-14a6-49ae-97bc-6eba6914391e","iss":"https://login.microsoftonline.com/72f988bf-86f1-41af-91ab-2d7cd011db47/v2.0",\
    "iat":\(now - 60),"nbf":\(now - 60),"exp":\(now + 3540),"aio":"AWQAm/8UAAAAJ3YeCzxq9Cq5KqQeHhJgK+kUSKq0W4ndwBq0m3zh0V0Rk2J5gxYlzm1C\
    7dBTCA7D3q7sx0o0vHZ2UBTp8Sj5eEFE2cC7O4hDHXn+ZPaLcNgmx6IRLM6uNH7VhCe0Ys8m","email":"AdeleV@contoso.onmicrosoft.com",\
    "family_name":"Vance","given_name":"Adele","name":"Adele Vance","nonce":"8b7c0e4f-6b2d-4b77-9c84-1c9a0d6f3e21.637954801234567890",\
    "oid":"00000000-0000-0000-66f3-3332eca7ea81","preferred_username":"AdeleV@contoso.onmicrosoft.com",\
    "rh":"0.AXEAv4j5cvGGr0GRqy180BHbR3beMWemFK5Jl7xuummUFDlxAEs.","roles":["Directory.Reader","Sites.Reader"],\
    "sid":"0b1e9a7e-1cf3-4d6e-9f51-4d0a9b0f3c2a","sub":"AAAAAAAAAAAAAAAAAAAAAIkzqFVrSaSaFHy782bbtaQ","tid":"72f988bf-86f1-41af-91ab-2d7cd011db47",\
    "uti":"fqiBqXLPj0eQa82S-IYFAA","ver":"2.0","xms_tpl":"en"}
    """
}

let nonce = "8b7c0e4f-6b2d-4b77-9c84-1c9a0d6f3e21.637954801234567890"

struct Case {
    let algorithm: JWSAlgorithm
    let token: String
    let keys: JWKSet
    let payloadSize: Int
    let reference: ReferenceVerifier
}

/// Three keys of one type in a set (a provider publishes several during rotation); the token
/// names the second by kid.
func makeCase(_ algorithm: JWSAlgorithm, kind: TestSigningKey.Kind, now: Int) -> Case {
    do {
        let signers = try (0..<3).map { _ in try TestSigningKey.generate(kind) }
        let jwks = try "{\"keys\":[" + signers.enumerated().map { index, signer in
            try signer.publicJWK(kid: "bench-key-\(index)", use: "sig")
        }.joined(separator: ",") + "]}"
        let keys = try JWKSet(jsonData: Array(jwks.utf8))
        guard keys.keys.count == 3 else { fail("the benchmark key set lost keys: \(keys.skipped)") }
        let claims = realisticClaims(now: now)
        let header = "{\"typ\":\"JWT\",\"alg\":\"\(algorithm.rawValue)\",\"kid\":\"bench-key-1\"}"
        let token = try signers[1].token(header: header, payload: claims, alg: algorithm.rawValue)
        let reference = try signers[1].makeReferenceVerifier()
        return Case(algorithm: algorithm, token: token, keys: keys, payloadSize: claims.utf8.count, reference: reference)
    } catch {
        fail("cannot make the \(algorithm) test keys: \(error)")
    }
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

let now = Int(Date().timeIntervalSince1970)
progress("preparing keys and tokens …")
let cases = [
    makeCase(.rs256, kind: .rsa(bits: 2048), now: now),
    makeCase(.es256, kind: .ec(curve: "P-256"), now: now),
    makeCase(.edDSA, kind: .ed25519, now: now),
]
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
