#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A JWS in compact serialization (`header.payload.signature`, RFC 7515 §7.1), parsed but not
/// yet verified.
///
/// Parsing is strict: exactly three parts; each part strict base64url; the header a JSON
/// object without duplicate member names whose `alg` is a string (see ``JOSEHeader`` for the
/// rest). Refused with their own errors: tokens longer than ``maximumTokenSize``, the JSON
/// serialization, five-part JWE tokens and `b64: false`. The payload may be any bytes.
///
/// The value never prints its payload or signature (see ``description``).
public struct CompactJWS: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The longest token accepted, in bytes: id_tokens are one to a few kilobytes.
    public static let maximumTokenSize = 64 * 1024

    /// The protected header.
    public let header: JOSEHeader
    /// The decoded payload.
    public let payload: [UInt8]
    /// The decoded signature.
    public let signature: [UInt8]

    /// The token as given, kept instead of a copy of the signing input: copying 1–2 kB per
    /// verification is measurable next to an RSA verification.
    private let source: Source
    private let signingInputLength: Int

    private enum Source: Sendable {
        case string(String)
        case bytes([UInt8])
    }

    /// The bytes the signature covers: the ASCII `header.payload` of the token.
    public var signingInput: [UInt8] { withSigningInput { Array($0) } }

    /// Calls `body` with the signing input, without copying it.
    func withSigningInput<Result>(_ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        switch source {
        case .string(var string):
            return string.withUTF8 { body(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer($0)[0..<signingInputLength])) }
        case .bytes(let bytes):
            return bytes.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[0..<signingInputLength])) }
        }
    }

    /// Parses a compact JWS.
    public init(parsing token: some StringProtocol) throws(JOSEError) {
        var string = String(token)
        let parts = string.withUTF8 { CompactJWS.parse($0) }
        try self.init(parts: parts.get(), source: .string(string))
    }

    /// Parses a compact JWS given as ASCII bytes.
    public init(parsing bytes: some Collection<UInt8>) throws(JOSEError) {
        let array = Array(bytes)
        let parts = array.withUnsafeBufferPointer { CompactJWS.parse($0) }
        try self.init(parts: parts.get(), source: .bytes(array))
    }

    private init(parts: Parts, source: Source) {
        header = parts.header
        payload = parts.payload
        signature = parts.signature
        signingInputLength = parts.signingInputLength
        self.source = source
    }

    /// A JWS from parts the caller has already checked; tests use it to send a signature over
    /// arbitrary bytes (a Wycheproof message) through the verifier.
    init(header: JOSEHeader, signingInput: [UInt8], payload: [UInt8], signature: [UInt8]) {
        self.header = header
        self.payload = payload
        self.signature = signature
        source = .bytes(signingInput)
        signingInputLength = signingInput.count
    }

    private struct Parts {
        var header: JOSEHeader
        var payload: [UInt8]
        var signature: [UInt8]
        var signingInputLength: Int
    }

    public var description: String {
        var parts = ["alg \(JOSEError.printable(header.algorithm))"]
        if let keyID = header.keyID { parts.append("kid \(JOSEError.printable(keyID))") }
        parts.append("payload \(payload.count) bytes")
        return "CompactJWS(" + parts.joined(separator: ", ") + ")"
    }

    public var debugDescription: String { description }

    /// Mirrors only the description, so `dump` and debuggers never show the payload or signature.
    public var customMirror: Mirror { Mirror(self, children: ["summary": description]) }

    private static func position(of byte: UInt8, in buffer: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        guard let base = buffer.baseAddress, start < buffer.count,
            let found = memchr(base + start, Int32(byte), buffer.count - start)
        else { return nil }
        return UnsafeRawPointer(found) - UnsafeRawPointer(base)
    }

    private static func parse(_ token: UnsafeBufferPointer<UInt8>) -> Result<Parts, JOSEError> {
        do throws(JOSEError) {
            return .success(try parseOrThrow(token))
        } catch {
            return .failure(error)
        }
    }

    private static func parseOrThrow(_ token: UnsafeBufferPointer<UInt8>) throws(JOSEError) -> Parts {
        guard token.count <= maximumTokenSize else { throw .tokenTooLarge(limit: maximumTokenSize) }
        guard let first = token.first else { throw .malformedToken("the token is empty") }
        if first == UInt8(ascii: "{") { throw .jsonSerializationUnsupported }

        // memchr finds the dots with vector instructions; a byte loop over a 2 kB token costs
        // a tenth of what the whole parse may.
        guard let firstDot = position(of: UInt8(ascii: "."), in: token, from: 0),
            let secondDot = position(of: UInt8(ascii: "."), in: token, from: firstDot + 1),
            position(of: UInt8(ascii: "."), in: token, from: secondDot + 1) == nil
        else {
            let dotCount = token.reduce(0) { $1 == UInt8(ascii: ".") ? $0 + 1 : $0 }
            if dotCount == 4 { throw .encryptedTokenUnsupported }
            throw .malformedToken("a compact JWS has three parts separated by dots; this token has \(dotCount + 1)")
        }
        let dots = (firstDot, secondDot)

        let headerPart = UnsafeBufferPointer(rebasing: token[0..<dots.0])
        let payloadPart = UnsafeBufferPointer(rebasing: token[(dots.0 + 1)..<dots.1])
        let signaturePart = UnsafeBufferPointer(rebasing: token[(dots.1 + 1)...])

        guard !headerPart.isEmpty else { throw .malformedToken("the header is empty") }
        // The header's bytes are only needed until it is parsed: decode into scratch space.
        guard let headerLength = Base64URL.decodedLength(ofEncodedLength: headerPart.count) else {
            throw .malformedToken("the header is not strict base64url")
        }
        let parsedHeader: Result<JSONValue, JOSEError> = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: headerLength) { scratch in
            guard Base64URL.decode(headerPart, into: scratch) else {
                return .failure(.malformedToken("the header is not strict base64url"))
            }
            do throws(JSONError) {
                return .success(
                    try JSONValue(
                        parsing: UnsafeBufferPointer(scratch), limits: JSONLimits(maximumBytes: maximumTokenSize, maximumDepth: 16)))
            } catch {
                return .failure(.malformedToken("the header is \(JOSEError(error))"))
            }
        }
        guard case .object(let headerObject) = try parsedHeader.get() else {
            throw .malformedToken("the header is not a JSON object")
        }
        let header = try JOSEHeader(json: headerObject)

        guard let payload = Base64URL.decode(buffer: payloadPart) else {
            throw .malformedToken("the payload is not strict base64url")
        }
        guard let signature = Base64URL.decode(buffer: signaturePart) else {
            throw .malformedToken("the signature is not strict base64url")
        }
        return Parts(header: header, payload: payload, signature: signature, signingInputLength: dots.1)
    }
}
