import Foundation

/// The outcome of a finished child process.
public struct ProcessResult: Sendable {
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

/// Runs child processes for tests, with a time limit, captured output and an explicit environment.
public enum ProcessRunner {
    /// Runs `executable` with `arguments` and waits for it (at most `timeout` seconds, then SIGKILL).
    /// `environment` replaces the child's environment entirely when given; `extraEnvironment`
    /// is merged on top of it (or on top of this process's environment).
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
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        var env = environment ?? ProcessInfo.processInfo.environment
        for (key, value) in extraEnvironment { env[key] = value }
        for key in removingEnvironment { env.removeValue(forKey: key) }
        process.environment = env
        if let currentDirectory { process.currentDirectoryURL = currentDirectory }

        let pipes = SpawnLock.pipes(3)
        let outPipe = pipes[0], errPipe = pipes[1], inPipe = pipes[2]
        process.standardOutput = outPipe
        process.standardError = errPipe
        process.standardInput = inPipe

        let outData = LockedData(), errData = LockedData()
        outPipe.fileHandleForReading.readabilityHandler = { handle in outData.append(handle.availableData) }
        errPipe.fileHandleForReading.readabilityHandler = { handle in errData.append(handle.availableData) }

        do { try SpawnLock.run(process) } catch {
            throw ProcessRunnerError.launchFailed(executable.path, "\(error)")
        }
        if let stdin {
            // A child may stop reading early (a plug-in refusing a 1 MB line): a broken pipe is
            // its answer, not a reason for SIGPIPE to end the whole test process.
            signal(SIGPIPE, SIG_IGN)
            try? inPipe.fileHandleForWriting.write(contentsOf: Data(stdin.utf8))
        }
        try? inPipe.fileHandleForWriting.close()

        let timedOut = waitOrKill(process, timeout: timeout)
        outPipe.fileHandleForReading.readabilityHandler = nil
        errPipe.fileHandleForReading.readabilityHandler = nil
        outData.append(outPipe.fileHandleForReading.readDataToEndOfFile())
        errData.append(errPipe.fileHandleForReading.readDataToEndOfFile())
        return ProcessResult(
            status: process.terminationStatus,
            stdout: String(decoding: outData.value, as: UTF8.self),
            stderr: String(decoding: errData.value, as: UTF8.self),
            timedOut: timedOut)
    }
}

/// Marks pipes close-on-exec. Foundation's Pipe does not, so a child started at the same time
/// by another test (a long-lived daemon, say) would inherit the write end of this child's
/// output pipe and keep `readDataToEndOfFile` waiting until that daemon exits. The child's
/// own stdin/stdout/stderr are dup2'ed copies, which do not carry the flag.
public func closeOnExec(_ pipes: Pipe...) {
    for pipe in pipes {
        for fd in [pipe.fileHandleForReading.fileDescriptor, pipe.fileHandleForWriting.fileDescriptor] {
            _ = fcntl(fd, F_SETFD, fcntl(fd, F_GETFD) | FD_CLOEXEC)
        }
    }
}

/// A byte buffer appended to from pipe callbacks.
final class LockedData: @unchecked Sendable {
    private let lock = NSLock()
    private var data = Data()
    func append(_ more: Data) { lock.lock(); data.append(more); lock.unlock() }
    var value: Data { lock.lock(); defer { lock.unlock() }; return data }
}

extension ProcessRunner {
    /// Waits for `process` to exit; kills it with SIGKILL after `timeout` seconds. Returns
    /// whether it had to be killed.
    @discardableResult
    public static func waitOrKill(_ process: Process, timeout: TimeInterval, poll: useconds_t = 2_000) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        var timedOut = false
        while process.isRunning {
            if Date() > deadline {
                timedOut = true
                kill(process.processIdentifier, SIGKILL)
                break
            }
            usleep(poll)
        }
        process.waitUntilExit()
        return timedOut
    }
}
