import COpenSSL
import Foundation

/// A private key made at run time, for tests and benchmarks that need validly signed tokens.
///
/// TEST KEYS ONLY: nothing here is used by authkit itself, and no private key is ever written
/// to disk or committed; each process generates its own.
public final class TestSigningKey: @unchecked Sendable {
    /// The kind of key to generate.
    public enum Kind: Sendable, Equatable {
        case rsa(bits: Int)
        /// `curve` is the JWK name: `P-256`, `P-384` or `P-521`.
        case ec(curve: String)
        case ed25519
    }

    public enum Failure: Error, CustomStringConvertible {
        case openSSL(String)
        public var description: String {
            switch self {
            case .openSSL(let step): return "OpenSSL failed to \(step)"
            }
        }
    }

    public let kind: Kind
    private let pkey: OpaquePointer

    /// The OpenSSL key, for ``ReferenceVerifier``.
    var evpKey: OpaquePointer { pkey }
    var isRSA: Bool {
        if case .rsa = kind { return true }
        return false
    }

    private init(kind: Kind, pkey: OpaquePointer) {
        self.kind = kind
        self.pkey = pkey
    }

    deinit { EVP_PKEY_free(pkey) }

    /// Generates a fresh key.
    public static func generate(_ kind: Kind) throws -> TestSigningKey {
        let typeName: String
        switch kind {
        case .rsa: typeName = "RSA"
        case .ec: typeName = "EC"
        case .ed25519: typeName = "ED25519"
        }
        guard let context = EVP_PKEY_CTX_new_from_name(nil, typeName, nil) else { throw Failure.openSSL("make a keygen context") }
        defer { EVP_PKEY_CTX_free(context) }
        guard EVP_PKEY_keygen_init(context) == 1 else { throw Failure.openSSL("start keygen") }
        switch kind {
        case .rsa(let bits):
            guard EVP_PKEY_CTX_set_rsa_keygen_bits(context, Int32(bits)) == 1 else { throw Failure.openSSL("set RSA bits") }
        case .ec(let curve):
            let group = ["P-256": "prime256v1", "P-384": "secp384r1", "P-521": "secp521r1"][curve] ?? curve
            guard EVP_PKEY_CTX_set_group_name(context, group) == 1 else { throw Failure.openSSL("set the curve") }
        case .ed25519:
            break
        }
        var pkey: OpaquePointer?
        guard EVP_PKEY_generate(context, &pkey) == 1, let pkey else { throw Failure.openSSL("generate a key") }
        return TestSigningKey(kind: kind, pkey: pkey)
    }

    /// The curve's coordinate length for EC keys.
    private var coordinateLength: Int {
        if case .ec(let curve) = kind { return ["P-256": 32, "P-384": 48, "P-521": 66][curve] ?? 0 }
        return 0
    }

    /// The public key's JWK members (`kty`, and `n`/`e`, `crv`/`x`/`y` or `crv`/`x`), values
    /// base64url, in a stable order.
    public func publicJWKMembers() throws -> [(String, String)] {
        switch kind {
        case .rsa:
            return [("kty", "RSA"), ("n", TestBase64URL.encode(try bigNumber("n"))), ("e", TestBase64URL.encode(try bigNumber("e")))]
        case .ec(let curve):
            var point = [UInt8](repeating: 0, count: 1 + 2 * coordinateLength)
            var length = 0
            guard EVP_PKEY_get_octet_string_param(pkey, "pub", &point, point.count, &length) == 1, length == point.count,
                point[0] == 0x04
            else { throw Failure.openSSL("export the EC point") }
            let x = Array(point[1...coordinateLength]), y = Array(point[(1 + coordinateLength)...])
            return [("kty", "EC"), ("crv", curve), ("x", TestBase64URL.encode(x)), ("y", TestBase64URL.encode(y))]
        case .ed25519:
            var raw = [UInt8](repeating: 0, count: 32)
            var length = raw.count
            guard EVP_PKEY_get_raw_public_key(pkey, &raw, &length) == 1, length == 32 else {
                throw Failure.openSSL("export the Ed25519 key")
            }
            return [("kty", "OKP"), ("crv", "Ed25519"), ("x", TestBase64URL.encode(raw))]
        }
    }

    /// The public JWK as JSON text, with optional `kid`, `alg`, `use` and extra raw members
    /// (`extra` values are JSON text, inserted as is).
    public func publicJWK(kid: String? = nil, alg: String? = nil, use: String? = nil, extra: [(String, String)] = []) throws -> String {
        var members = try publicJWKMembers().map { "\"\($0.0)\":\"\($0.1)\"" }
        if let kid { members.append("\"kid\":\"\(kid)\"") }
        if let alg { members.append("\"alg\":\"\(alg)\"") }
        if let use { members.append("\"use\":\"\(use)\"") }
        members += extra.map { "\"\($0.0)\":\($0.1)" }
        return "{" + members.joined(separator: ",") + "}"
    }

    private func bigNumber(_ name: String) throws -> [UInt8] {
        var bn: OpaquePointer?
        guard EVP_PKEY_get_bn_param(pkey, name, &bn) == 1, let bn else { throw Failure.openSSL("export \(name)") }
        defer { BN_free(bn) }
        var bytes = [UInt8](repeating: 0, count: Int((BN_num_bits(bn) + 7) / 8))
        _ = BN_bn2bin(bn, &bytes)
        return bytes
    }

    /// A JWS signature over `input` for algorithm `alg` (RS*, PS*, ES* in raw `r ‖ s` form, EdDSA).
    public func sign(_ input: [UInt8], alg: String) throws -> [UInt8] {
        guard let context = EVP_MD_CTX_new() else { throw Failure.openSSL("make a digest context") }
        defer { EVP_MD_CTX_free(context) }
        let digestName: String? = alg == "EdDSA" ? nil : "SHA" + alg.suffix(3)
        var pkeyContext: OpaquePointer?
        guard EVP_DigestSignInit_ex(context, &pkeyContext, digestName, nil, nil, pkey, nil) == 1 else {
            throw Failure.openSSL("start signing")
        }
        if alg.hasPrefix("PS"), let pkeyContext {
            guard EVP_PKEY_CTX_set_rsa_padding(pkeyContext, RSA_PKCS1_PSS_PADDING) == 1,
                EVP_PKEY_CTX_set_rsa_pss_saltlen(pkeyContext, RSA_PSS_SALTLEN_DIGEST) == 1
            else { throw Failure.openSSL("set PSS padding") }
        }
        var length = 0
        guard EVP_DigestSign(context, nil, &length, input, input.count) == 1 else { throw Failure.openSSL("size the signature") }
        var signature = [UInt8](repeating: 0, count: length)
        guard EVP_DigestSign(context, &signature, &length, input, input.count) == 1 else { throw Failure.openSSL("sign") }
        signature.removeSubrange(length...)
        guard alg.hasPrefix("ES") else { return signature }
        return try rawECDSA(fromDER: signature)
    }

    private func rawECDSA(fromDER der: [UInt8]) throws -> [UInt8] {
        var cursor: UnsafePointer<UInt8>? = nil
        let parsed: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            cursor = buffer.baseAddress
            return d2i_ECDSA_SIG(nil, &cursor, buffer.count)
        }
        guard let parsed else { throw Failure.openSSL("parse the ECDSA signature") }
        defer { ECDSA_SIG_free(parsed) }
        var r: OpaquePointer?, s: OpaquePointer?
        ECDSA_SIG_get0(parsed, &r, &s)
        var raw = [UInt8](repeating: 0, count: 2 * coordinateLength)
        let length = Int32(coordinateLength)
        let written = raw.withUnsafeMutableBufferPointer { buffer -> Bool in
            guard let base = buffer.baseAddress else { return false }
            return BN_bn2binpad(r, base, length) == length && BN_bn2binpad(s, base + coordinateLength, length) == length
        }
        guard written else { throw Failure.openSSL("export r and s") }
        return raw
    }

    /// A compact JWS: `header` and `payload` are JSON text (or any bytes), signed with `alg`.
    public func token(header: String, payload: String, alg: String) throws -> String {
        try token(header: Array(header.utf8), payload: Array(payload.utf8), alg: alg)
    }

    /// A compact JWS of raw header and payload bytes, signed with `alg`.
    public func token(header: [UInt8], payload: [UInt8], alg: String) throws -> String {
        let signingInput = TestBase64URL.encode(header) + "." + TestBase64URL.encode(payload)
        let signature = try sign(Array(signingInput.utf8), alg: alg)
        return signingInput + "." + TestBase64URL.encode(signature)
    }
}

/// HMAC-SHA-256 (and -384/-512), for forging the tokens an attacker would make.
public func testHMAC(_ alg: String, key: [UInt8], data: [UInt8]) -> [UInt8] {
    var output = [UInt8](repeating: 0, count: 64)
    var length = 0
    let digest = "SHA" + alg.suffix(3)
    let result = EVP_Q_mac(nil, "HMAC", nil, digest, nil, key, key.count, data, data.count, &output, output.count, &length)
    return result == nil ? [] : Array(output[0..<length])
}

/// Base64url without padding, for building test tokens (independent of JOSE's own codec).
public enum TestBase64URL {
    public static func encode(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    public static func encode(_ text: String) -> String { encode(Array(text.utf8)) }

    public static func decode(_ text: String) -> [UInt8]? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        return Data(base64Encoded: base64).map { Array($0) }
    }
}
