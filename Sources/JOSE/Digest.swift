import COpenSSL

/// The SHA-2 hashes JWS algorithms use, fetched from OpenSSL once per process.
enum Digest: Int, Sendable {
    case sha256, sha384, sha512

    /// The hash length in bytes.
    var length: Int {
        switch self {
        case .sha256: return 32
        case .sha384: return 48
        case .sha512: return 64
        }
    }

    /// The prefetched `EVP_MD`. Fetching by name on every call takes a lock and a lookup in
    /// OpenSSL 3, which would show in the verification rate.
    var md: OpaquePointer? { FetchedDigests.shared.digests[rawValue] }

    /// Hashes `data` into `output`, which holds at least ``length`` bytes.
    func hash(_ data: UnsafeRawBufferPointer, into output: UnsafeMutablePointer<UInt8>) -> Bool {
        guard let md else { return false }
        var size: UInt32 = 0
        return EVP_Digest(data.baseAddress, data.count, output, &size, md, nil) == 1 && Int(size) == length
    }
}

/// `EVP_MD` objects are immutable once fetched and OpenSSL documents them as safe to share
/// between threads; they live for the whole process.
private final class FetchedDigests: @unchecked Sendable {
    static let shared = FetchedDigests()
    let digests: [OpaquePointer?]

    private init() {
        let names: [String] = ["SHA256", "SHA384", "SHA512"]
        digests = names.map { name in EVP_MD_fetch(nil, name, nil) }
    }
}
