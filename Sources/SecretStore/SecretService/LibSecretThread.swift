import CLibSecret

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The one thread of the process that calls libsecret.
///
/// libsecret and the GDBus proxies it creates are not safe to use from several threads at
/// once, and its async calls complete on the thread-default `GMainContext` of the thread
/// that started them. So every libsecret call of the process runs here, one job at a time,
/// with this thread's own context pushed as thread default (never the global default
/// context, which a host application may be running). Jobs wait for their calls by
/// iterating that context (see ``AsyncCall``), which is also what lets a timer bound them.
final class LibSecretThread: @unchecked Sendable {
    /// Shared by every ``SecretServiceStore`` of the process: libsecret keeps one
    /// `SecretService` per process, so two threads would share it.
    static let shared = LibSecretThread()

    /// Called with nil when the thread could not be started.
    typealias Job = (Result<LibSecretThread, SecretStoreError>) -> Void

    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>
    private var jobs: [Job] = []
    private var started = false

    /// Only touched on the thread itself.
    private(set) var context: OpaquePointer?
    /// State kept between jobs (connection, service, schema); only touched on the thread.
    var session = LibSecretSession()

    private init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        condition = .allocate(capacity: 1)
        condition.initialize(to: pthread_cond_t())
        pthread_cond_init(condition, nil)
    }

    /// Runs `body` on the thread and returns its result.
    nonisolated(nonsending) func run<T: Sendable>(
        _ body: @escaping @Sendable (LibSecretThread) throws(SecretStoreError) -> T
    ) async throws(SecretStoreError) -> T {
        let result: Result<T, SecretStoreError> = await withCheckedContinuation { continuation in
            enqueue { started in
                switch started {
                case .failure(let error): continuation.resume(returning: .failure(error))
                case .success(let thread): continuation.resume(returning: Result { () throws(SecretStoreError) -> T in try body(thread) })
                }
            }
        }
        return try result.get()
    }

    private func enqueue(_ job: @escaping Job) {
        pthread_mutex_lock(mutex)
        if !started {
            // libsecret is opened on first use, not linked (scripts/generate-doors).
            var message = [CChar](repeating: 0, count: 256)
            if ak_libsecret_load(&message, message.count) != 0 {
                pthread_mutex_unlock(mutex)
                job(
                    .failure(
                        .noSecretService(detail: String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)))
                )
                return
            }
            started = startThread()
            if !started {
                pthread_mutex_unlock(mutex)
                job(.failure(.providerFailure(operation: "start", message: "cannot start a thread for libsecret")))
                return
            }
        }
        jobs.append(job)
        pthread_cond_signal(condition)
        pthread_mutex_unlock(mutex)
    }

    private func startThread() -> Bool {
        OwnThread.start { self.main() }
    }

    private func main() {
        context = g_main_context_new()
        g_main_context_push_thread_default(context)
        while true {
            pthread_mutex_lock(mutex)
            while jobs.isEmpty { pthread_cond_wait(condition, mutex) }
            let job = jobs.removeFirst()
            pthread_mutex_unlock(mutex)
            job(.success(self))
        }
    }
}
