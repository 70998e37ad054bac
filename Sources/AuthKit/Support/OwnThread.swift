#if canImport(Glibc)
import Glibc
#endif

/// Runs blocking system calls (a socket's connect and read) on a thread of their own, so
/// that they never hold one of the cooperative pool's few threads.
package enum OwnThread {
    package static func run<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { (continuation: CheckedContinuation<T, Never>) in
            let box = Box { continuation.resume(returning: work()) }
            var attributes = pthread_attr_t()
            pthread_attr_init(&attributes)
            pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
            var thread = pthread_t()
            let context = Unmanaged.passRetained(box).toOpaque()
            let status = pthread_create(
                &thread, &attributes,
                { argument in
                    guard let argument else { return nil }
                    Unmanaged<Box>.fromOpaque(argument).takeRetainedValue().body()
                    return nil
                }, context)
            pthread_attr_destroy(&attributes)
            if status != 0 {
                // No thread to be had: run it here rather than not at all.
                Unmanaged<Box>.fromOpaque(context).takeRetainedValue().body()
            }
        }
    }

    private final class Box: @unchecked Sendable {
        let body: () -> Void
        init(_ body: @escaping () -> Void) { self.body = body }
    }
}
