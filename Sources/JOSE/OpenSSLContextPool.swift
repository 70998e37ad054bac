import Synchronization

/// Ready-to-use OpenSSL contexts of one kind: verification contexts for one key and one
/// algorithm, or digest contexts for one hash.
///
/// Making an `EVP_PKEY_CTX` (or `EVP_MD_CTX` for EdDSA) and initialising it for verification
/// costs several microseconds in OpenSSL 3 — a quarter of an RSA-2048 verification — so each
/// context is kept and reused, the way `openssl speed` reuses one. A context is used by one
/// thread at a time: a caller takes one out of the pool and puts it back afterwards; when the
/// pool is empty (first use, or several threads at once) a new one is made.
final class OpenSSLContextPool: Sendable {
    /// At most this many idle contexts are kept; more concurrent verifiers make and free their own.
    static let capacity = 8

    // Pointers are stored as bit patterns: the pool hands each context to one caller at a
    // time under the lock, which is what makes sharing them across threads sound.
    private let idle = Mutex<[UInt]>([])
    private let destroy: @Sendable (OpaquePointer) -> Void

    init(destroy: @escaping @Sendable (OpaquePointer) -> Void) {
        self.destroy = destroy
    }

    deinit {
        let contexts = idle.withLock { contexts in
            let all = contexts
            contexts.removeAll()
            return all
        }
        for bits in contexts {
            if let context = OpaquePointer(bitPattern: bits) { destroy(context) }
        }
    }

    /// Runs `body` with a context from the pool, or one from `make` when none is idle;
    /// `nil` when `make` fails.
    func withContext<Result>(make: () -> OpaquePointer?, _ body: (OpaquePointer) -> Result) -> Result? {
        let reused = idle.withLock { $0.popLast() }
        guard let context = reused.flatMap({ OpaquePointer(bitPattern: $0) }) ?? make() else { return nil }
        let result = body(context)
        let bits = UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(context)))
        let kept = idle.withLock { contexts in
            guard contexts.count < OpenSSLContextPool.capacity else { return false }
            contexts.append(bits)
            return true
        }
        if !kept { destroy(context) }
        return result
    }
}
