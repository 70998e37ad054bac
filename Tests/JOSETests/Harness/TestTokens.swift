import Foundation
import JOSE
import TestSupport

/// Keys generated once per test process (TestSupport's run-time test keys; nothing on disk).
enum TestKeys {
    static let rsa = Result { try TestSigningKey.generate(.rsa(bits: 2048)) }
    static let rsaOther = Result { try TestSigningKey.generate(.rsa(bits: 2048)) }
    static let rsa1024 = Result { try TestSigningKey.generate(.rsa(bits: 1024)) }
    static let p256 = Result { try TestSigningKey.generate(.ec(curve: "P-256")) }
    static let p384 = Result { try TestSigningKey.generate(.ec(curve: "P-384")) }
    static let p521 = Result { try TestSigningKey.generate(.ec(curve: "P-521")) }
    static let ed25519 = Result { try TestSigningKey.generate(.ed25519) }
}

/// Signs test tokens with one key under one `kid` and algorithm.
struct TestSigner {
    let key: TestSigningKey
    let kid: String?
    let alg: String

    init(_ key: Result<TestSigningKey, any Error>, kid: String? = "test-key", alg: String = "RS256") throws {
        self.key = try key.get()
        self.kid = kid
        self.alg = alg
    }

    /// The public JWK as JSON text, with `kid` and optionally `alg` and `use`.
    func jwk(alg: String? = nil, use: String? = "sig", extra: [(String, String)] = []) throws -> String {
        try key.publicJWK(kid: kid, alg: alg, use: use, extra: extra)
    }

    /// A token over `payload` (any bytes); `header` members are added after `alg` and `kid`.
    func token(payload: [UInt8], header: [(String, JSONValue)] = [], alg overriding: String? = nil) throws -> String {
        var object = JSONObject()
        object["alg"] = .string(overriding ?? alg)
        if let kid { object["kid"] = .string(kid) }
        for (name, value) in header { object[name] = value }
        return try key.token(header: JSONValue.object(object).serializedBytes(), payload: payload, alg: alg)
    }

    /// A token over JSON claims.
    func token(claims: JSONValue, header: [(String, JSONValue)] = []) throws -> String {
        try token(payload: claims.serializedBytes(), header: header)
    }
}

/// A key set document from JWK texts.
func keySetJSON(_ keys: [String]) -> String {
    "{\"keys\":[" + keys.joined(separator: ",") + "]}"
}

/// A key set from JWK texts.
func keySet(_ keys: [String]) throws -> JWKSet {
    try JWKSet(jsonData: Array(keySetJSON(keys).utf8))
}

/// Typical id_token claims at a pinned time, for claim tests.
enum StandardClaims {
    static let issuer = "https://issuer.example.com"
    static let clientID = "client-1"
    static let nonce = "n-0S6_WzA2Mj"
    static let now: Int64 = 1_700_000_000
    static let clock: @Sendable () -> Date = { Date(timeIntervalSince1970: Double(StandardClaims.now)) }

    static func object(_ changes: [(String, JSONValue?)] = []) -> JSONValue {
        var claims: JSONObject = [
            "iss": .string(issuer),
            "sub": "248289761001",
            "aud": .string(clientID),
            "exp": .number(JSONNumber(now + 3600)),
            "iat": .number(JSONNumber(now - 10)),
            "nonce": .string(nonce),
            "name": "Jane Doe",
        ]
        for (name, value) in changes { claims[name] = value }
        return .object(claims)
    }

    static func validator(issuer rule: IssuerRule = .exact(issuer), algorithms: Set<JWSAlgorithm> = [.rs256]) -> IDTokenValidator {
        IDTokenValidator(issuer: rule, clientID: clientID, allowedAlgorithms: algorithms, clock: clock)
    }
}

/// Decodes a hex string from a test vector.
func hexBytes(_ hex: String) -> [UInt8] {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(hex.utf8.count / 2)
    var iterator = hex.utf8.makeIterator()
    func nibble(_ c: UInt8) -> UInt8 {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
        default: return c - UInt8(ascii: "A") + 10
        }
    }
    while let high = iterator.next(), let low = iterator.next() { bytes.append(nibble(high) << 4 | nibble(low)) }
    return bytes
}

/// A fixture file parsed with JOSE's own strict parser.
func fixtureJSON(_ path: String) throws -> JSONValue {
    let data = try Data(contentsOf: TestPaths.fixture(path))
    return try JSONValue(parsing: Array(data), limits: JSONLimits(maximumBytes: 8 << 20, maximumDepth: 64))
}
