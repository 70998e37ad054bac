import Foundation
import TestSupport

/// A child process a test talks to while it runs: it reads what the child printed so far
/// (the URL `authkit login` shows, a device code), writes to its standard input, and then
/// waits for it with a time limit. `ProcessRunner` covers the fire-and-wait case.
final class LiveProcess: @unchecked Sendable {
    private let process = Process()
    private let stdinPipe: Pipe, stdoutPipe: Pipe, stderrPipe: Pipe
    private let lock = NSLock()
    private var out = Data(), err = Data()
    private let started = Date()

    init(_ executable: URL, _ arguments: [String], environment: [String: String]) throws {
        let pipes = SpawnLock.pipes(3)
        (stdinPipe, stdoutPipe, stderrPipe) = (pipes[0], pipes[1], pipes[2])
        process.executableURL = executable
        process.arguments = arguments
        process.environment = environment
        process.standardInput = stdinPipe
        process.standardOutput = stdoutPipe
        process.standardError = stderrPipe
        stdoutPipe.fileHandleForReading.readabilityHandler = { [weak self] handle in self?.append(handle.availableData, error: false) }
        stderrPipe.fileHandleForReading.readabilityHandler = { [weak self] handle in self?.append(handle.availableData, error: true) }
        do { try SpawnLock.run(process) } catch {
            throw ProcessRunnerError.launchFailed(executable.path, "\(error)")
        }
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    private func append(_ data: Data, error: Bool) {
        lock.lock()
        if error { err.append(data) } else { out.append(data) }
        lock.unlock()
    }

    var stderrSoFar: String {
        lock.lock()
        defer { lock.unlock() }
        return String(decoding: err, as: UTF8.self)
    }

    var isRunning: Bool { process.isRunning }

    /// Sends `signal` (SIGKILL by default: no handler, no cleanup — as a crash or the OOM
    /// killer would end it).
    func send(signal: Int32 = SIGKILL) {
        if process.isRunning { Glibc.kill(process.processIdentifier, signal) }
    }

    /// Waits (polling, at most `timeout` seconds) until `extract` finds something in what the
    /// child wrote to standard error; nil when it exited or the time ran out first.
    func waitForStderr<T>(timeout: TimeInterval = 30, _ extract: (String) -> T?) async -> T? {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let found = extract(stderrSoFar) { return found }
            if !process.isRunning { return extract(stderrSoFar) }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return nil
    }

    /// Writes `text` to the child's standard input.
    func send(_ text: String) {
        stdinPipe.fileHandleForWriting.write(Data(text.utf8))
    }

    func closeInput() {
        try? stdinPipe.fileHandleForWriting.close()
    }

    /// Waits for the child to exit (SIGKILL after `timeout` seconds) and returns its output.
    func finish(timeout: TimeInterval = 60) -> ProcessResult {
        let timedOut = ProcessRunner.waitOrKill(process, timeout: timeout, poll: 10_000)
        closeInput()
        stdoutPipe.fileHandleForReading.readabilityHandler = nil
        stderrPipe.fileHandleForReading.readabilityHandler = nil
        append(stdoutPipe.fileHandleForReading.readDataToEndOfFile(), error: false)
        append(stderrPipe.fileHandleForReading.readDataToEndOfFile(), error: true)
        lock.lock()
        defer { lock.unlock() }
        return ProcessResult(
            status: process.terminationStatus, stdout: String(decoding: out, as: UTF8.self),
            stderr: String(decoding: err, as: UTF8.self), timedOut: timedOut)
    }

    /// Seconds since the child was started.
    var elapsed: TimeInterval { Date().timeIntervalSince(started) }
}
