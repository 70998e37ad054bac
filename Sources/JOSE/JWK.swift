/// A public key that can verify JWS signatures, read from a JSON Web Key (RFC 7517).
///
/// Only keys fit for verification are ever made: RSA of 2048 to 16384 bits with an odd
/// exponent above 1 and no ROCA fingerprint; EC on P-256, P-384 or P-521 with a point on the
/// curve; OKP Ed25519. A key with private members, a `use` other than `sig`, `key_ops` without
/// `verify`, or an `alg` that does not fit its type is refused with a ``KeyRejection``.
///
/// The OpenSSL key is built once, here, and shared by every copy of the value; it is freed
/// when the last copy goes away. A `JWK` is safe to use from several threads at once.
public struct JWK: Sendable, Hashable, CustomStringConvertible {
    /// The `kty` of a usable key.
    public enum KeyType: String, Sendable, Hashable {
        /// RSA (`kty` `RSA`).
        case rsa = "RSA"
        /// Elliptic curve (`kty` `EC`).
        case ec = "EC"
        /// Octet key pair, Ed25519 (`kty` `OKP`, RFC 8037).
        case okp = "OKP"
    }

    /// `kty`.
    public let keyType: KeyType
    /// `kid`, when the key has one.
    public let keyID: String?
    /// `crv` for EC and OKP keys.
    public let curve: String?
    /// `alg`, when the key names the one algorithm it is for.
    public let algorithm: JWSAlgorithm?
    /// `use`, when present (always `sig` for a usable key).
    public let use: String?
    /// The RSA modulus length in bits, or the curve size (256, 384, 521, 255 for Ed25519).
    public let bitLength: Int

    let publicKey: PublicKey
    /// The public key material in a canonical form, for equality.
    private let material: [UInt8]
    /// The key's required members in RFC 7638's form: sorted, no whitespace.
    private let thumbprintInput: String

    /// Reads a key from its JSON; throws ``JOSEError/unusableKey(_:)`` with the reason when it
    /// cannot be used for verification.
    public init(json: JSONValue) throws(JOSEError) {
        guard case .object(let object) = json else { throw .unusableKey(.notAnObject) }
        try self.init(object: object)
    }

    /// Reads a key from a JSON object; see ``init(json:)``.
    public init(object: JSONObject) throws(JOSEError) {
        do throws(KeyRejection) {
            self = try JWK.parse(object)
        } catch {
            throw .unusableKey(error)
        }
    }

    private init(
        keyType: KeyType, keyID: String?, curve: String?, algorithm: JWSAlgorithm?, use: String?,
        bitLength: Int, publicKey: PublicKey, material: [UInt8], thumbprintInput: String
    ) {
        self.thumbprintInput = thumbprintInput
        self.keyType = keyType
        self.keyID = keyID
        self.curve = curve
        self.algorithm = algorithm
        self.use = use
        self.bitLength = bitLength
        self.publicKey = publicKey
        self.material = material
    }

    /// The key's JWK SHA-256 thumbprint (RFC 7638), base64url: what a DPoP-bound token's `jkt`
    /// names (RFC 9449 §6.1).
    public func thumbprint() throws(JOSEError) -> String {
        try SHA256.base64URLDigest(of: thumbprintInput)
    }

    /// The key's public members as a JWK (`kty`, `crv`, `x`, `y`, or `kty`, `n`, `e`): what a DPoP
    /// proof's header carries (RFC 9449 §4.2).
    public var publicMembers: JSONObject {
        guard case .object(let object)? = try? JSONValue(parsing: Array(thumbprintInput.utf8)) else { return JSONObject() }
        return object
    }

    /// The algorithms this key verifies: its `alg` when it names one, otherwise every
    /// algorithm that fits its type and curve (RS* and PS* for RSA).
    public var algorithms: [JWSAlgorithm] {
        if let algorithm { return [algorithm] }
        switch publicKey.kind {
        case .rsa: return [.rs256, .rs384, .rs512, .ps256, .ps384, .ps512]
        case .ec(let curve): return [curve.algorithm]
        case .ed25519: return [.edDSA]
        }
    }

    /// True when this key may verify `algorithm` signatures (RFC 8725 §3.1: the algorithm must
    /// fit the key's type, curve and `alg`).
    public func canVerify(_ algorithm: JWSAlgorithm) -> Bool {
        if let own = self.algorithm { return own == algorithm }
        switch (publicKey.kind, algorithm.family) {
        case (.rsa, .rsaPKCS1), (.rsa, .rsaPSS): return true
        case (.ec(let curve), .ecdsa): return curve.algorithm == algorithm
        case (.ed25519, .eddsa): return true
        default: return false
        }
    }

    public var description: String {
        var parts = [keyType.rawValue]
        if let curve { parts.append(curve) } else { parts.append("\(bitLength) bits") }
        if let keyID { parts.append("kid \(JOSEError.printable(keyID))") }
        if let algorithm { parts.append("alg \(algorithm.rawValue)") }
        return "JWK(" + parts.joined(separator: ", ") + ")"
    }

    public static func == (lhs: JWK, rhs: JWK) -> Bool {
        lhs.keyType == rhs.keyType && lhs.keyID == rhs.keyID && lhs.curve == rhs.curve
            && lhs.algorithm == rhs.algorithm && lhs.use == rhs.use && lhs.material == rhs.material
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(keyType)
        hasher.combine(keyID)
        hasher.combine(material)
    }

    // MARK: Parsing

    /// Members that only a private key has (RFC 7518 §6.2.2, §6.3.2, §6.4.1; RFC 8037 §2).
    private static let privateMembers = ["d", "p", "q", "dp", "dq", "qi", "oth", "k"]

    private static func parse(_ object: JSONObject) throws(KeyRejection) -> JWK {
        guard let ktyValue = object["kty"] else { throw .missingKeyType }
        guard let kty = ktyValue.stringValue else { throw .malformedMember("kty") }
        if kty == "oct" { throw .symmetricKey }
        for name in privateMembers where object[name] != nil { throw .privateKeyMaterial }
        guard let keyType = KeyType(rawValue: kty) else { throw .unsupportedKeyType(kty) }

        let keyID = try optionalString(object, "kid")
        let use = try optionalString(object, "use")
        if let use, use != "sig" { throw .notForSignatures }
        if let operations = object["key_ops"] {
            guard let list = operations.arrayValue, list.allSatisfy({ $0.stringValue != nil }) else {
                throw .malformedMember("key_ops")
            }
            guard list.contains(.string("verify")) else { throw .verifyNotPermitted }
        }
        var algorithm: JWSAlgorithm?
        if let name = try optionalString(object, "alg") {
            guard let known = JWSAlgorithm(rawValue: name) else { throw .unsupportedAlgorithm(name) }
            algorithm = known
        }

        switch keyType {
        case .rsa:
            let modulus = stripLeadingZeros(try requiredBase64URL(object, "n"))
            let exponent = stripLeadingZeros(try requiredBase64URL(object, "e"))
            guard let first = modulus.first else { throw .malformedMember("n") }
            let bits = (modulus.count - 1) * 8 + (8 - first.leadingZeroBitCount)
            guard bits >= 2048 else { throw .rsaModulusTooSmall(bits: bits) }
            guard bits <= 16384 else { throw .rsaModulusTooLarge(bits: bits) }
            guard let last = modulus.last, last & 1 == 1 else { throw .rsaModulusInvalid }
            // Odd and above 1; at most 64 bits (OpenSSL's own limit is far higher, but no
            // real key needs more, and a huge exponent only slows verification).
            guard exponent.count <= 8, let lastE = exponent.last, lastE & 1 == 1,
                exponent.count > 1 || lastE > 1
            else { throw .rsaExponentInvalid }
            if let algorithm, algorithm.family != .rsaPKCS1 && algorithm.family != .rsaPSS {
                throw .algorithmMismatch(algorithm)
            }
            guard !ROCAFingerprint.matches(modulus: modulus) else { throw .rsaROCAVulnerable }
            let algorithms = algorithm.map { [$0] } ?? [.rs256, .rs384, .rs512, .ps256, .ps384, .ps512]
            let publicKey: PublicKey
            do {
                publicKey = try PublicKey.rsa(modulus: modulus, exponent: exponent, algorithms: algorithms)
            } catch {
                throw rejection(error)
            }
            var material = withUnsafeBytes(of: UInt32(modulus.count).bigEndian) { Array($0) }
            material += modulus
            material += exponent
            return JWK(
                keyType: .rsa, keyID: keyID, curve: nil, algorithm: algorithm, use: use, bitLength: bits,
                publicKey: publicKey, material: material,
                thumbprintInput: #"{"e":""# + Base64URL.encode(exponent) + #"","kty":"RSA","n":""# + Base64URL.encode(modulus) + #""}"#)

        case .ec:
            guard let crvValue = object["crv"] else { throw .malformedMember("crv") }
            guard let crv = crvValue.stringValue else { throw .malformedMember("crv") }
            guard let curve = ECCurve(jwkName: crv) else { throw .unsupportedCurve(crv) }
            let x = try requiredBase64URL(object, "x")
            let y = try requiredBase64URL(object, "y")
            // RFC 7518 §6.2.1.2/3: each coordinate is exactly the curve's length.
            guard x.count == curve.coordinateLength else { throw .wrongCoordinateLength("x") }
            guard y.count == curve.coordinateLength else { throw .wrongCoordinateLength("y") }
            if let algorithm, algorithm != curve.algorithm { throw .algorithmMismatch(algorithm) }
            let publicKey: PublicKey
            do {
                publicKey = try PublicKey.ec(curve: curve, x: x, y: y)
            } catch {
                throw rejection(error)
            }
            let bits = curve == .p521 ? 521 : curve.coordinateLength * 8
            return JWK(
                keyType: .ec, keyID: keyID, curve: crv, algorithm: algorithm, use: use, bitLength: bits,
                publicKey: publicKey, material: x + y,
                thumbprintInput: #"{"crv":""# + crv + #"","kty":"EC","x":""# + Base64URL.encode(x) + #"","y":""# + Base64URL.encode(y)
                    + #""}"#)

        case .okp:
            guard let crvValue = object["crv"] else { throw .malformedMember("crv") }
            guard let crv = crvValue.stringValue else { throw .malformedMember("crv") }
            guard crv == "Ed25519" else { throw .unsupportedCurve(crv) }
            let x = try requiredBase64URL(object, "x")
            guard x.count == 32 else { throw .wrongCoordinateLength("x") }
            if let algorithm, algorithm != .edDSA { throw .algorithmMismatch(algorithm) }
            let publicKey: PublicKey
            do {
                publicKey = try PublicKey.ed25519(x)
            } catch {
                throw rejection(error)
            }
            return JWK(
                keyType: .okp, keyID: keyID, curve: crv, algorithm: algorithm, use: use, bitLength: 255,
                publicKey: publicKey, material: x,
                thumbprintInput: #"{"crv":""# + crv + #"","kty":"OKP","x":""# + Base64URL.encode(x) + #""}"#)
        }
    }

    private static func rejection(_ failure: PublicKey.BuildFailure) -> KeyRejection {
        switch failure {
        case .rejected(let reason): return reason
        }
    }

    private static func optionalString(_ object: JSONObject, _ name: String) throws(KeyRejection) -> String? {
        guard let value = object[name] else { return nil }
        guard let string = value.stringValue else { throw .malformedMember(name) }
        return string
    }

    private static func requiredBase64URL(_ object: JSONObject, _ name: String) throws(KeyRejection) -> [UInt8] {
        guard let text = object[name]?.stringValue else { throw .malformedMember(name) }
        do {
            return try Base64URL.decode(text)
        } catch {
            throw .malformedMember(name)
        }
    }

    /// RFC 7518 §6.3.1.1 forbids leading zero octets in `n` and `e`; some providers have
    /// published them anyway. They change no value, so they are tolerated and dropped.
    private static func stripLeadingZeros(_ bytes: [UInt8]) -> [UInt8] {
        guard let first = bytes.firstIndex(where: { $0 != 0 }) else { return [] }
        return Array(bytes[first...])
    }
}
