import Foundation

/// The outcome of a finished child process.
public struct ProcessResult: Sendable {
    /// The exit code, or 128 + the signal that ended it (as a shell reports it).
    public var status: Int32
    public var stdout: String
    public var stderr: String
    /// True when the process was killed because it outlived its time limit.
    public var timedOut: Bool

    public init(status: Int32, stdout: String, stderr: String, timedOut: Bool) {
        self.status = status
        self.stdout = stdout
        self.stderr = stderr
        self.timedOut = timedOut
    }
}

public enum ProcessRunnerError: Error, CustomStringConvertible {
    case launchFailed(String, String)
    public var description: String {
        switch self {
        case .launchFailed(let path, let reason): return "could not start \(path): \(reason)"
        }
    }
}

/// Runs a child process to its end for a test: a time limit, captured output and an explicit
/// environment. ``TestProcess`` is the same child for a test that talks to it while it runs.
public enum ProcessRunner {
    /// Runs `executable` with `arguments` and waits for it (at most `timeout` seconds, then
    /// SIGKILL to its process group). `environment` replaces the child's environment entirely
    /// when given; `extraEnvironment` is merged on top of it (or on top of this process's).
    /// Blocks the calling thread; from async code use the `async` overload.
    public static func run(
        _ executable: URL,
        _ arguments: [String] = [],
        environment: [String: String]? = nil,
        extraEnvironment: [String: String] = [:],
        removingEnvironment: [String] = [],
        stdin: String? = nil,
        currentDirectory: URL? = nil,
        timeout: TimeInterval = 60
    ) throws -> ProcessResult {
        var env = environment ?? ProcessInfo.processInfo.environment
        for (key, value) in extraEnvironment { env[key] = value }
        for key in removingEnvironment { env.removeValue(forKey: key) }
        let process = try TestProcess(
            executable, arguments, environment: env, directory: currentDirectory, stdin: stdin == nil ? .null : .pipe)
        if let stdin { process.send(stdin) }
        process.closeInput()
        return process.finish(timeout: timeout)
    }

    /// The same on a thread of its own, so that waiting for the child never holds one of the
    /// cooperative pool's few threads (work the child waits for may need it).
    public static func run(
        _ executable: URL,
        _ arguments: [String] = [],
        environment: [String: String]? = nil,
        extraEnvironment: [String: String] = [:],
        removingEnvironment: [String] = [],
        stdin: String? = nil,
        currentDirectory: URL? = nil,
        timeout: TimeInterval = 60
    ) async throws -> ProcessResult {
        try await offThePool {
            try run(
                executable, arguments, environment: environment, extraEnvironment: extraEnvironment,
                removingEnvironment: removingEnvironment, stdin: stdin, currentDirectory: currentDirectory, timeout: timeout)
        }
    }
}

/// Runs blocking `work` on a new thread and awaits its result: tests wait for children and
/// peers this way, never on one of the cooperative pool's threads (two on this machine).
@discardableResult
public func offThePool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try work() }) }.start()
    }
}
