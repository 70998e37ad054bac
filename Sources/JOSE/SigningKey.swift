import CCryptoLoader
import COpenSSL
import Synchronization

/// A private P-256 key that signs ES256 JWS — a DPoP proof (RFC 9449) — held in this process's
/// memory (made here, or read from where a store keeps it) or in a TPM 2.0, which never lets
/// the private key out (``TPM``).
///
/// Its public half goes through the same path as a verification key (``JWK``: the point
/// checked to be on the curve), and a key read from anywhere must sign a test message that
/// verifies with it before it is used: a stored key that does not hold together is refused,
/// never used to sign.
public final class SigningKey: @unchecked Sendable {
    /// Where the private key is.
    public enum Location: Sendable, Equatable {
        /// In this process's memory (saved by the caller where it keeps secrets).
        case memory
        /// In a TPM: what is saved is a blob only that TPM can load.
        case tpm
    }

    /// Where the private key is.
    public let location: Location
    /// The public key, as a verifier reads it.
    public let publicKey: JWK
    private let pkey: OpaquePointer
    /// The provider's library context of a TPM key (nil: OpenSSL's default context).
    private let tpm: TPM?

    private init(pkey: OpaquePointer, location: Location, tpm: TPM?) throws(JOSEError) {
        self.pkey = pkey
        self.location = location
        self.tpm = tpm
        do {
            self.publicKey = try Self.publicJWK(pkey)
        } catch {
            ak_EVP_PKEY_free(pkey)
            throw error
        }
        // The key holds together: what it signs verifies with its public half, through the
        // verifier every id_token goes through.
        var probe = JSONObject()
        probe["probe"] = .string("is this key whole?")
        let token = try compactJWS(header: JSONObject(), payload: probe)
        guard (try? JWSVerifier(allowedAlgorithms: [.es256]).verify(token, keys: JWKSet(keys: [publicKey]))) != nil else {
            throw .signingKey("its private and public halves do not belong together")
        }
    }

    deinit {
        // A TPM key's free flushes its object in the TPM: one TPM command at a time.
        if let tpm {
            let pkey = self.pkey
            tpm.withLock { ak_EVP_PKEY_free(pkey) }
        } else {
            ak_EVP_PKEY_free(pkey)
        }
    }

    // MARK: Making and reading keys

    /// A new key in this process's memory.
    public static func generate() throws(JOSEError) -> SigningKey {
        try CryptoLibrary.requireLoaded()
        guard let pkey = Self.generatePKey(libraryContext: nil, properties: nil) else {
            throw .signingKey("OpenSSL could not make a P-256 key")
        }
        return try SigningKey(pkey: pkey, location: .memory, tpm: nil)
    }

    /// A new key in `tpm`: only its wrapped blob (``tpmBlob``) ever leaves it.
    public static func generate(in tpm: TPM) throws(JOSEError) -> SigningKey {
        let pkey = try tpm.withContext { context throws(JOSEError) -> OpaquePointer in
            guard let pkey = generatePKey(libraryContext: context, properties: "provider=tpm2", clearingErrors: false) else {
                throw .signingKey("the TPM could not make a P-256 key: \(CryptoErrors.drain())")
            }
            return pkey
        }
        return try SigningKey(pkey: pkey, location: .tpm, tpm: tpm)
    }

    /// The key a private JWK holds (`kty` EC, `crv` P-256, `x`, `y`, `d`), as ``privateJWK``
    /// writes it.
    public convenience init(privateJWK object: JSONObject) throws(JOSEError) {
        try CryptoLibrary.requireLoaded()
        guard object["kty"]?.stringValue == "EC", object["crv"]?.stringValue == "P-256", let x = object["x"]?.stringValue,
            let y = object["y"]?.stringValue, let d = object["d"]?.stringValue
        else { throw .signingKey("it is not a P-256 private JWK") }
        guard let xBytes = try? Base64URL.decode(x), let yBytes = try? Base64URL.decode(y), let dBytes = try? Base64URL.decode(d),
            xBytes.count == 32, yBytes.count == 32, dBytes.count == 32,
            dBytes.withUnsafeBufferPointer({ ECCurve.p256.isValidScalar($0) })
        else { throw .signingKey("its coordinates or private scalar have the wrong length or value") }
        var point = [0x04] + xBytes + yBytes
        var scalar = Array(dBytes.reversed())  // OSSL_PARAM BNs are native-endian
        defer { for index in scalar.indices { scalar[index] = 0 } }
        let pkey = point.withUnsafeMutableBytes { point in
            scalar.withUnsafeMutableBytes { scalar in
                var params = [
                    ak_OSSL_PARAM_construct_utf8_string(
                        Self.cString("group"), UnsafeMutablePointer(mutating: Self.cString("prime256v1")), 0),
                    ak_OSSL_PARAM_construct_octet_string(Self.cString("pub"), point.baseAddress, point.count),
                    ak_OSSL_PARAM_construct_BN(Self.cString("priv"), scalar.baseAddress?.assumingMemoryBound(to: UInt8.self), scalar.count),
                    ak_OSSL_PARAM_construct_end(),
                ]
                return Self.fromData(&params)
            }
        }
        guard let pkey else { throw .signingKey("OpenSSL refused the key") }
        try self.init(pkey: pkey, location: .memory, tpm: nil)
    }

    /// The key a TPM blob wraps, loaded into `tpm` (which must be the TPM that made it).
    public convenience init(tpmBlob blob: [UInt8], tpm: TPM) throws(JOSEError) {
        let pkey = try tpm.withContext { context throws(JOSEError) -> OpaquePointer in
            // The decoder writes the key through the pointer it was given when it decodes,
            // after this call returns: storage that outlives both calls.
            CryptoErrors.clear()
            let result = UnsafeMutablePointer<OpaquePointer?>.allocate(capacity: 1)
            result.initialize(to: nil)
            defer { result.deallocate() }
            guard
                let decoder = ak_OSSL_DECODER_CTX_new_for_pkey(
                    result, nil, nil, Self.cString("EC"), authkit_evp_pkey_keypair_selection(), context, Self.cString("provider=tpm2"))
            else { throw .signingKey("the TPM's key decoder is not available: \(CryptoErrors.drain())") }
            defer { ak_OSSL_DECODER_CTX_free(decoder) }
            let decoded = blob.withUnsafeBufferPointer { buffer -> Int32 in
                var data = buffer.baseAddress
                var length = buffer.count
                return ak_OSSL_DECODER_from_data(decoder, &data, &length)
            }
            // A decoder tries every decoder it has; those that did not fit leave errors behind.
            defer { CryptoErrors.clear() }
            guard decoded == 1, let pkey = result.pointee else {
                if let partial = result.pointee { ak_EVP_PKEY_free(partial) }
                throw .signingKey("the TPM does not load the stored key (another TPM's, or the TPM was cleared): \(CryptoErrors.drain())")
            }
            return pkey
        }
        try self.init(pkey: pkey, location: .tpm, tpm: tpm)
    }

    /// The private JWK to keep where secrets are kept (a key in memory only; nil for a TPM's).
    /// Whoever holds it can sign as this key.
    public var privateJWK: JSONObject? {
        guard location == .memory, var scalar = Self.privateScalar(pkey) else { return nil }
        defer { for index in scalar.indices { scalar[index] = 0 } }
        var object = publicKey.publicMembers
        object["d"] = .string(Base64URL.encode(scalar))
        return object
    }

    /// The TCTI of the TPM holding the key (nil for a key in memory).
    public var tpmTCTI: String? { tpm?.tcti }

    /// The TPM's wrapped key (PEM, `TSS2 PRIVATE KEY`), which only that TPM can load (nil for a
    /// key in memory).
    public var tpmBlob: [UInt8]? {
        guard location == .tpm, let tpm else { return nil }
        return try? tpm.withContext { _ throws(JOSEError) -> [UInt8] in
            // The context keeps the type and structure pointers (not copies): static strings.
            guard
                let encoder = ak_OSSL_ENCODER_CTX_new_for_pkey(
                    pkey, authkit_evp_pkey_keypair_selection(), Self.cString("PEM"), Self.cString("PrivateKeyInfo"),
                    Self.cString("provider=tpm2"))
            else { throw .signingKey("no encoder: \(CryptoErrors.drain())") }
            defer { ak_OSSL_ENCODER_CTX_free(encoder) }
            var data: UnsafeMutablePointer<UInt8>?
            var length = 0
            guard ak_OSSL_ENCODER_to_data(encoder, &data, &length) == 1, let data else {
                throw .signingKey("not encoded: \(CryptoErrors.drain())")
            }
            defer { ak_CRYPTO_free(data, #fileID, #line) }
            return Array(UnsafeBufferPointer(start: data, count: length))
        }
    }

    // MARK: Signing

    /// Signs `message` with ES256: the JWS signature, `r ‖ s`, 64 bytes.
    public func sign(_ message: [UInt8]) throws(JOSEError) -> [UInt8] {
        let digest = try SHA256.digest(message)
        // A key in memory signs on any thread; a TPM's, one command at a time across every key
        // of that TPM (tpm2-openssl's TPM context is not thread-safe).
        func signDigest(_ libraryContext: OpaquePointer?) throws(JOSEError) -> [UInt8] {
            CryptoErrors.clear()
            let context = ak_EVP_PKEY_CTX_new_from_pkey(libraryContext, pkey, libraryContext == nil ? nil : "provider=tpm2")
            guard let context else { throw .signingKey("no signing context: \(CryptoErrors.drain())") }
            defer { ak_EVP_PKEY_CTX_free(context) }
            var signature = [UInt8](repeating: 0, count: 80)
            var length = signature.count
            guard ak_EVP_PKEY_sign_init(context) == 1,
                ak_EVP_PKEY_sign(context, &signature, &length, digest, digest.count) == 1
            else { throw .signingKey("the key did not sign\(tpm == nil ? "" : " (is the TPM there?)"): \(CryptoErrors.drain())") }
            return Array(signature.prefix(length))
        }
        let der: [UInt8]
        if let tpm { der = try tpm.withContext(signDigest) } else { der = try signDigest(nil) }
        guard let raw = ECDSASignature.raw(fromDER: der, curve: .p256) else { throw .signingKey("OpenSSL's signature is not DER") }
        return raw
    }

    /// A compact JWS of `header` and `payload` (their members in this order, each JSON written
    /// by the one writer), signed with ES256; `alg` is set in the header.
    public func compactJWS(header: JSONObject, payload: JSONObject) throws(JOSEError) -> String {
        var header = header
        header["alg"] = .string(JWSAlgorithm.es256.rawValue)
        let signingInput =
            Base64URL.encode(JSONValue.object(header).serializedBytes()) + "."
            + Base64URL.encode(JSONValue.object(payload).serializedBytes())
        return signingInput + "." + Base64URL.encode(try sign(Array(signingInput.utf8)))
    }

    // MARK: OpenSSL

    private static func generatePKey(libraryContext: OpaquePointer?, properties: String?, clearingErrors: Bool = true) -> OpaquePointer? {
        CryptoErrors.clear()
        guard let context = ak_EVP_PKEY_CTX_new_from_name(libraryContext, "EC", properties) else { return nil }
        defer { ak_EVP_PKEY_CTX_free(context) }
        var params = [
            ak_OSSL_PARAM_construct_utf8_string(cString("group"), UnsafeMutablePointer(mutating: cString("P-256")), 0),
            ak_OSSL_PARAM_construct_end(),
        ]
        var pkey: OpaquePointer?
        guard ak_EVP_PKEY_keygen_init(context) == 1, ak_EVP_PKEY_CTX_set_params(context, &params) == 1,
            ak_EVP_PKEY_generate(context, &pkey) == 1
        else {
            // The caller that names why (a TPM's refusal) reads the queue first.
            if clearingErrors { ak_ERR_clear_error() }
            return nil
        }
        return pkey
    }

    private static func fromData(_ params: inout [OSSL_PARAM]) -> OpaquePointer? {
        guard let context = ak_EVP_PKEY_CTX_new_from_name(nil, "EC", nil) else { return nil }
        defer { ak_EVP_PKEY_CTX_free(context) }
        var pkey: OpaquePointer?
        guard ak_EVP_PKEY_fromdata_init(context) == 1,
            ak_EVP_PKEY_fromdata(context, &pkey, authkit_evp_pkey_keypair_selection(), &params) == 1
        else {
            ak_ERR_clear_error()
            return nil
        }
        return pkey
    }

    /// The public half as a JWK, through the verification path.
    private static func publicJWK(_ pkey: OpaquePointer) throws(JOSEError) -> JWK {
        var point = [UInt8](repeating: 0, count: 65)
        var length = 0
        guard ak_EVP_PKEY_get_octet_string_param(pkey, "pub", &point, point.count, &length) == 1, length == 65, point[0] == 4 else {
            ak_ERR_clear_error()
            throw .signingKey("its public point cannot be read")
        }
        var object = JSONObject()
        object["kty"] = .string("EC")
        object["crv"] = .string("P-256")
        object["x"] = .string(Base64URL.encode(point[1..<33]))
        object["y"] = .string(Base64URL.encode(point[33..<65]))
        return try JWK(object: object)
    }

    /// The private scalar, big-endian, 32 bytes (a key in memory only).
    private static func privateScalar(_ pkey: OpaquePointer) -> [UInt8]? {
        var bignum: OpaquePointer?
        guard ak_EVP_PKEY_get_bn_param(pkey, "priv", &bignum) == 1, let bignum else {
            ak_ERR_clear_error()
            return nil
        }
        defer { ak_BN_free(bignum) }
        var scalar = [UInt8](repeating: 0, count: 32)
        guard ak_BN_bn2binpad(bignum, &scalar, 32) == 32 else { return nil }
        return scalar
    }

    /// A C string with static storage: `OSSL_PARAM` keeps the pointer.
    private static func cString(_ string: StaticString) -> UnsafePointer<CChar> {
        UnsafeRawPointer(string.utf8Start).assumingMemoryBound(to: CChar.self)
    }
}

/// OpenSSL's error queue, read and emptied: the last error's text, for a message.
enum CryptoErrors {
    /// Empties the queue before a call whose failure is to be named (a stale error would be
    /// named instead).
    static func clear() { ak_ERR_clear_error() }

    static func drain() -> String {
        var last: UInt = 0
        while true {
            let code = ak_ERR_get_error()
            if code == 0 { break }
            last = code
        }
        guard last != 0 else { return "no detail" }
        var buffer = [CChar](repeating: 0, count: 256)
        ak_ERR_error_string_n(last, &buffer, buffer.count)
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
