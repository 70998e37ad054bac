/// A provider's published keys (RFC 7517 §5), reduced to the ones that can verify signatures.
///
/// Keys that cannot be used (unknown `kty`, `use` other than `sig`, RSA under 2048 bits, a
/// point off its curve, private members …) do not make the set unusable: they are listed in
/// ``skipped`` with their reason, and the other keys stay in ``keys``. Only a document that is
/// not a key set at all fails as a whole.
public struct JWKSet: Sendable {
    /// The largest key set document accepted, in bytes (a provider's is a few kilobytes).
    public static let maximumSize = 512 * 1024
    /// The most keys read from one set; later entries are skipped with ``KeyRejection/tooManyKeys``.
    public static let maximumKeyCount = 100

    /// The usable keys, in document order.
    public let keys: [JWK]
    /// The entries that were not usable, with their reasons.
    public let skipped: [SkippedKey]

    /// An entry of the `keys` array that was not usable.
    public struct SkippedKey: Sendable, Equatable, CustomStringConvertible {
        /// Its position in the `keys` array.
        public let index: Int
        /// Its `kid`, when it had one that is a string.
        public let keyID: String?
        /// Why it was skipped.
        public let reason: KeyRejection

        public var description: String {
            "key \(index)\(keyID.map { " (kid \(JOSEError.printable($0)))" } ?? ""): \(reason)"
        }
    }

    /// Reads a JWK set document. Throws ``JOSEError/invalidKeySet(_:)`` only when the document
    /// as a whole is unusable: larger than ``maximumSize``, not JSON, or without a `keys` array.
    public init(jsonData: some Collection<UInt8>) throws(JOSEError) {
        guard jsonData.count <= JWKSet.maximumSize else {
            throw .invalidKeySet("the document is longer than \(JWKSet.maximumSize) bytes")
        }
        let json: JSONValue
        do {
            json = try JSONValue(parsing: jsonData, limits: JSONLimits(maximumBytes: JWKSet.maximumSize, maximumDepth: 16))
        } catch {
            throw .invalidKeySet("\(JOSEError(error))")
        }
        try self.init(json: json)
    }

    /// Reads a JWK set from parsed JSON; see ``init(jsonData:)``.
    public init(json: JSONValue) throws(JOSEError) {
        // Without libcrypto no key could be loaded; say so instead of skipping every key.
        try CryptoLibrary.requireLoaded()
        guard case .object(let object) = json else { throw .invalidKeySet("it is not a JSON object") }
        guard let entries = object["keys"]?.arrayValue else { throw .invalidKeySet("it has no keys array") }
        var keys: [JWK] = []
        var skipped: [SkippedKey] = []
        for (index, entry) in entries.enumerated() {
            let keyID = entry["kid"]?.stringValue
            guard index < JWKSet.maximumKeyCount else {
                skipped.append(SkippedKey(index: index, keyID: keyID, reason: .tooManyKeys))
                continue
            }
            do {
                keys.append(try JWK(json: entry))
            } catch {
                let reason: KeyRejection
                if case .unusableKey(let why) = error { reason = why } else { reason = .notLoadable }
                skipped.append(SkippedKey(index: index, keyID: keyID, reason: reason))
            }
        }
        self.keys = keys
        self.skipped = skipped
    }

    /// A set of keys made elsewhere.
    public init(keys: [JWK]) {
        self.keys = keys
        self.skipped = []
    }

    /// The usable keys whose `kid` is `keyID` (normally one; a set that repeats a `kid` gives several).
    public func keys(withID keyID: String) -> [JWK] {
        keys.filter { $0.keyID == keyID }
    }

    /// The first usable key whose `kid` is `keyID`.
    public subscript(keyID keyID: String) -> JWK? {
        keys.first { $0.keyID == keyID }
    }
}
