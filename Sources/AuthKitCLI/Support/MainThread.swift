#if canImport(Glibc)
import Glibc
#endif

/// The process's main thread, where the fast paths may block for one exchange with the agent
/// (never a thread of the cooperative pool).
enum MainThread {
    /// Set by the first use, which `AuthKitCommand.main()` makes before anything else.
    static let id = pthread_self()

    static var isCurrent: Bool { pthread_equal(pthread_self(), id) != 0 }
}
