import ChildProcess
import Foundation

/// A child process a test started, through ``ChildProcess`` like every child of this package.
///
/// Its standard output and error (when they are pipes) are read by one dedicated thread with
/// blocking `poll`/`read` — no dispatch source is installed on a pipe (swift-corelibs-foundation's
/// `readabilityHandler` races the descriptor's close at teardown and crashed the test process).
/// The child runs in a process group of its own; a time-out, ``kill(_:)`` and deinit signal
/// the whole group, so nothing it started outlives it.
public final class TestProcess: @unchecked Sendable {
    /// Where one of the child's standard streams goes.
    public enum Stream: Sendable {
        case null
        /// A pipe: input the test writes, or output collected here.
        case pipe
        /// A file (created or truncated, mode 0600).
        case file(URL)
    }

    public let pid: Int32
    public let executable: URL
    private let lock = NSLock()
    private var out = Data(), err = Data()
    private var ended: ChildProcess.Termination?
    private var input: Int32?
    private let readerDone = DispatchSemaphore(value: 0)
    private let hasReader: Bool
    private let started = Date()

    /// Starts `executable`. `environment` replaces the child's whole environment (nil: this
    /// process's).
    public init(
        _ executable: URL, _ arguments: [String] = [], environment: [String: String]? = nil,
        directory: URL? = nil, stdin: Stream = .null, stdout: Stream = .pipe, stderr: Stream = .pipe
    ) throws {
        var options = ChildProcess.Options(
            [executable.path] + arguments,
            environment: environment.map { $0.map { "\($0.key)=\($0.value)" } })
        options.directory = directory?.path
        options.newProcessGroup = true
        var files: [Int32] = []
        defer { for fd in files { close(fd) } }
        func stream(_ stream: Stream, input: Bool) throws -> ChildProcess.Stream {
            switch stream {
            case .null: return .null
            case .pipe: return .pipe
            case .file(let url):
                let fd = open(url.path, input ? O_RDONLY | O_CLOEXEC : O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
                guard fd >= 0 else { throw ProcessRunnerError.launchFailed(executable.path, "cannot open \(url.path)") }
                files.append(fd)
                return .descriptor(fd)
            }
        }
        options.stdin = try stream(stdin, input: true)
        options.stdout = try stream(stdout, input: false)
        options.stderr = try stream(stderr, input: false)
        let child: ChildProcess.Spawned
        do throws(ChildProcess.SpawnError) {
            child = try ChildProcess.spawn(options)
        } catch {
            throw ProcessRunnerError.launchFailed(executable.path, error.description)
        }
        self.pid = child.pid
        self.executable = executable
        self.input = child.stdin
        let outputs = [child.stdout, child.stderr]
        hasReader = outputs.contains { $0 != nil }
        if hasReader {
            let thread = Thread { [self] in self.read(stdout: child.stdout, stderr: child.stderr) }
            thread.name = "TestProcess reader \(child.pid)"
            thread.start()
        }
    }

    deinit {
        if termination == nil {
            Glibc.kill(-pid, SIGKILL)
            Glibc.kill(pid, SIGKILL)
            reap(ChildProcess.wait(pid))
        }
        if let input { close(input) }
    }

    // MARK: Output

    private func read(stdout: Int32?, stderr: Int32?) {
        var fds = [stdout, stderr].compactMap { $0 }.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while !fds.isEmpty {
            let ready = Glibc.poll(&fds, nfds_t(fds.count), -1)
            if ready < 0 {
                if errno == EINTR { continue }
                break
            }
            var open: [pollfd] = []
            for entry in fds {
                guard entry.revents != 0 else { open.append(entry); continue }
                let count = buffer.withUnsafeMutableBytes { Glibc.read(entry.fd, $0.baseAddress, $0.count) }
                if count > 0 {
                    lock.lock()
                    if entry.fd == stdout { out.append(contentsOf: buffer[0..<count]) } else { err.append(contentsOf: buffer[0..<count]) }
                    lock.unlock()
                    open.append(entry)
                } else if count < 0 && (errno == EINTR || errno == EAGAIN) {
                    open.append(entry)
                } else {
                    close(entry.fd)
                }
            }
            fds = open.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
        }
        for entry in fds { close(entry.fd) }
        readerDone.signal()
    }

    /// What the child wrote to standard output so far.
    public var stdoutSoFar: String {
        lock.lock()
        defer { lock.unlock() }
        return String(decoding: out, as: UTF8.self)
    }

    /// What the child wrote to standard error so far.
    public var stderrSoFar: String {
        lock.lock()
        defer { lock.unlock() }
        return String(decoding: err, as: UTF8.self)
    }

    /// Waits (polling, at most `timeout` seconds) until `extract` finds something in what the
    /// child wrote to standard error; nil when it exited or the time ran out first.
    public func waitForStderr<T>(timeout: TimeInterval = 30, _ extract: (String) -> T?) async -> T? {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let found = extract(stderrSoFar) { return found }
            if !isRunning { return extract(stderrSoFar) }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return nil
    }

    /// Blocks (at most `timeout` seconds) until the child's standard output holds a whole
    /// line, and returns the first; nil when the child ended or the time ran out first.
    public func firstStdoutLine(timeout: TimeInterval) -> String? {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let text = stdoutSoFar
            if let newline = text.firstIndex(of: "\n") { return String(text[..<newline]) }
            if !isRunning || Date() > deadline { return nil }
            usleep(2_000)
        }
    }

    // MARK: Input

    /// Writes `text` to the child's standard input (a pipe). A child that stopped reading
    /// gets nothing more: the broken pipe is its answer, not a signal that ends the tests; and
    /// one that neither reads nor exits gets what fits before `timeout` seconds have passed,
    /// so that the caller's own wait (and its time-out) comes next.
    public func send(_ text: String, timeout: TimeInterval = 60) {
        lock.lock()
        let fd = input
        lock.unlock()
        guard let fd else { return }
        signal(SIGPIPE, SIG_IGN)
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        let deadline = Date().addingTimeInterval(timeout)
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if written >= 0 {
                bytes = bytes.dropFirst(written)
                continue
            }
            guard errno == EINTR || errno == EAGAIN else { return }
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else { return }
            var ready = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            _ = Glibc.poll(&ready, 1, Int32(min(left, 1) * 1000))
        }
    }

    /// Closes the child's standard input (end of file for it).
    public func closeInput() {
        lock.lock()
        let fd = input
        input = nil
        lock.unlock()
        if let fd { close(fd) }
    }

    // MARK: Life

    private func reap(_ termination: ChildProcess.Termination) {
        lock.lock()
        if ended == nil { ended = termination }
        lock.unlock()
    }

    /// How the child ended; nil while it runs (reaps it once it has ended).
    package var termination: ChildProcess.Termination? {
        lock.lock()
        defer { lock.unlock() }
        if ended == nil, let now = ChildProcess.poll(pid) { ended = now }
        return ended
    }

    public var isRunning: Bool { termination == nil }

    /// Sends `signal` to the child alone (SIGKILL by default: no handler, no cleanup, as a
    /// crash or the OOM killer would end it).
    public func send(signal: Int32 = SIGKILL) {
        if isRunning { Glibc.kill(pid, signal) }
    }

    /// Sends `signal` to the child's whole process group.
    public func kill(_ signal: Int32 = SIGKILL) {
        if isRunning { Glibc.kill(-pid, signal) }
    }

    /// Waits for the child to end (SIGKILL to its group after `timeout` seconds, unless
    /// `killing` is false); returns whether it was still running at the deadline. Blocks the
    /// calling thread: call it off the cooperative pool.
    @discardableResult
    public func wait(timeout: TimeInterval, killing: Bool = true) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        var delay: useconds_t = 500
        while isRunning {
            if Date() > deadline {
                guard killing else { return true }
                Glibc.kill(-pid, SIGKILL)
                Glibc.kill(pid, SIGKILL)
                reap(ChildProcess.wait(pid))
                return true
            }
            usleep(delay)
            delay = min(delay * 2, 10_000)
        }
        return false
    }

    /// Waits for the child (see ``wait(timeout:)``) and its output (a grandchild still holding
    /// the pipes gets 5 s more) and returns everything. Blocks the calling thread.
    public func finish(timeout: TimeInterval = 60) -> ProcessResult {
        let timedOut = wait(timeout: timeout)
        closeInput()
        if hasReader { _ = readerDone.wait(timeout: .now() + 5) }
        lock.lock()
        defer { lock.unlock() }
        return ProcessResult(
            status: ended?.status ?? -1, stdout: String(decoding: out, as: UTF8.self),
            stderr: String(decoding: err, as: UTF8.self), timedOut: timedOut)
    }

    /// Seconds since the child was started.
    public var elapsed: TimeInterval { Date().timeIntervalSince(started) }
}
