import CCryptoLoader
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

    /// Hashes `data` into `output`, which holds at least ``length`` bytes. The digest context
    /// is reused (EVP_Digest would allocate and free one per call).
    func hash(_ data: UnsafeRawBufferPointer, into output: UnsafeMutablePointer<UInt8>) -> Bool {
        guard let md else { return false }
        let hashed = FetchedDigests.shared.pools[rawValue].withContext(make: { ak_EVP_MD_CTX_new() }) { context in
            var size: UInt32 = 0
            return ak_EVP_DigestInit_ex2(context, md, nil) == 1 && ak_EVP_DigestUpdate(context, data.baseAddress, data.count) == 1
                && ak_EVP_DigestFinal_ex(context, output, &size) == 1 && Int(size) == length
        }
        return hashed == true
    }
}

/// `EVP_MD` objects are immutable once fetched and OpenSSL documents them as safe to share
/// between threads; they live for the whole process.
private final class FetchedDigests: @unchecked Sendable {
    static let shared = FetchedDigests()
    let digests: [OpaquePointer?]
    let pools: [OpenSSLContextPool]

    private init() {
        let names: [String] = ["SHA256", "SHA384", "SHA512"]
        digests = names.map { name in ak_EVP_MD_fetch(nil, name, nil) }
        pools = names.map { _ in OpenSSLContextPool(destroy: { context in ak_EVP_MD_CTX_free(context) }) }
    }
}
