#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The one way the package starts a thread of its own: for blocking system calls (a socket's
/// connect and read, scrypt, a child's wait), so that they never hold one of the cooperative
/// pool's few threads, and for libsecret's thread (``LibSecretThread``).
package enum OwnThread {
    /// Runs `work` on a new thread and returns its result.
    package static func run<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { (continuation: CheckedContinuation<T, Never>) in
            let body: @Sendable () -> Void = { continuation.resume(returning: work()) }
            // No thread to be had: run it here rather than not at all.
            if !start(body) { body() }
        }
    }

    /// Starts a detached thread running `body`. False when the system gives no thread.
    package static func start(_ body: @escaping @Sendable () -> Void) -> Bool {
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        defer { pthread_attr_destroy(&attributes) }
        var thread = pthread_t()
        let context = Unmanaged.passRetained(Box(body)).toOpaque()
        let status = pthread_create(
            &thread, &attributes,
            { argument in
                guard let argument else { return nil }
                Unmanaged<Box>.fromOpaque(argument).takeRetainedValue().body()
                return nil
            }, context)
        if status != 0 { Unmanaged<Box>.fromOpaque(context).release() }
        return status == 0
    }

    private final class Box: Sendable {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }
}
