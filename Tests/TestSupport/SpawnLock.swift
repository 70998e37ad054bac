import Foundation

/// Starts child processes one at a time, process-wide.
///
/// swift-corelibs-foundation's `Process.run()` on Linux lists the parent's open descriptors to
/// close them in the child, then spawns, and learns of the child's exit when a socket only that
/// child holds closes. Two threads spawning at once can leak one child's socket into the other
/// child (created between the listing and the spawn); the first child's `waitUntilExit()` then
/// waits for the second one to exit as well. With long-lived children (keyrings, test peers)
/// stopped by each other's tests, a full parallel run hung on zombies. Every `run()` in
/// TestSupport goes through here. Pipes are made (and marked close-on-exec) under the same
/// lock, so no spawn can catch one between its creation and the flag.
public enum SpawnLock {
    private static let lock = NSLock()

    /// `process.run()`, never concurrently with another spawn through this lock.
    public static func run(_ process: Process) throws {
        try locked { try process.run() }
    }

    /// `body` (making pipes, say) while no child is being spawned.
    public static func locked<T>(_ body: () throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }

    /// `count` new pipes, close-on-exec, made while no child is being spawned.
    public static func pipes(_ count: Int) -> [Pipe] {
        locked {
            let pipes = (0..<count).map { _ in Pipe() }
            for pipe in pipes { closeOnExec(pipe) }
            return pipes
        }
    }
}
