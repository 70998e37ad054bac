import Foundation

/// Why a test peer could not be used. Each description says what to do about it.
public enum PeerError: Error, CustomStringConvertible {
    case pythonMissing(URL)
    case scriptMissing(URL)
    case launchFailed(peer: String, reason: String)
    case notReady(peer: String, reason: String, log: String)
    case control(peer: String, request: String, status: Int, body: String)

    public var description: String {
        switch self {
        case .pythonMissing(let python):
            return
                "the test peers' Python (\(python.path)) is missing: run ./scripts/test (it creates .venv with Tests/Peers/requirements.txt)"
        case .scriptMissing(let script):
            return "test peer script \(script.path) is missing from the checkout"
        case .launchFailed(let peer, let reason):
            return "could not start test peer \(peer): \(reason); run ./scripts/test to (re)create .venv"
        case .notReady(let peer, let reason, let log):
            return "test peer \(peer) did not become ready: \(reason)\n--- its log ---\n\(log)"
        case .control(let peer, let request, let status, let body):
            return "test peer \(peer): \(request) answered \(status): \(body.prefix(500))"
        }
    }
}

/// One running test peer from `Tests/Peers/` (README there, "Contracts"): started with the
/// virtual environment's Python, ready when it printed its JSON ready line, stopped with
/// closing its standard input (then SIGTERM, then SIGKILL) by `stop()` or when released.
///
/// The peer's standard input is a pipe this process holds open: if the test process dies,
/// the pipe closes and the peer exits by itself, so no server outlives a crashed run.
public final class PeerProcess: @unchecked Sendable {
    public let name: String
    /// The parsed ready line.
    public let ready: PeerJSON
    /// `http://127.0.0.1:<port>`.
    public let baseURL: URL
    public let pid: Int32
    /// The peer's request log (`--log`); its stderr goes to `stderrURL`.
    public let logURL: URL
    public let stderrURL: URL
    public let directory: URL

    private let process: TestProcess
    private let lock = NSLock()
    private var stopped = false

    /// Starts `Tests/Peers/<script>` with `arguments` and waits for its ready line.
    public init(
        name: String,
        script: String,
        arguments: [String] = [],
        environment: [String: String] = [:],
        python: URL = TestPaths.python,
        readyTimeout: TimeInterval = 30
    ) throws(PeerError) {
        guard FileManager.default.isExecutableFile(atPath: python.path) else { throw .pythonMissing(python) }
        let scriptURL = TestPaths.packageRoot.appendingPathComponent("Tests/Peers/\(script)")
        guard FileManager.default.fileExists(atPath: scriptURL.path) else { throw .scriptMissing(scriptURL) }
        let directory: URL
        do {
            directory = try TestPaths.makeTemporaryDirectory(prefix: "authkit-peer-\(name)")
        } catch {
            throw .launchFailed(peer: name, reason: "no temporary directory: \(error)")
        }
        let logURL = directory.appendingPathComponent("\(name).log")
        let stderrURL = directory.appendingPathComponent("\(name).stderr")

        var env = ProcessInfo.processInfo.environment
        env["PYTHONUNBUFFERED"] = "1"
        env["PYTHONDONTWRITEBYTECODE"] = "1"  // keep __pycache__ out of the checkout
        for (key, value) in environment { env[key] = value }
        let process: TestProcess
        do {
            process = try TestProcess(
                python, [scriptURL.path, "--port", "0", "--log", logURL.path] + arguments, environment: env,
                directory: directory, stdin: .pipe, stdout: .pipe, stderr: .file(stderrURL))
        } catch {
            throw .launchFailed(peer: name, reason: "\(error)")
        }
        let line = process.firstStdoutLine(timeout: readyTimeout)
        func failure(_ reason: String) -> PeerError {
            Self.terminate(process)
            return .notReady(peer: name, reason: reason, log: Self.tail(of: [stderrURL, logURL]))
        }
        guard let line else {
            throw failure(
                process.isRunning
                    ? "no ready line within \(Int(readyTimeout)) s" : "it exited with status \(process.termination?.status ?? -1)")
        }
        guard let ready = try? PeerJSON(data: Data(line.utf8)), ready["ready"].bool == true,
            let base = ready["base_url"].string, let baseURL = URL(string: base)
        else {
            throw failure("its first line on stdout is not a ready line: \(line.prefix(200))")
        }
        self.name = name
        self.ready = ready
        self.baseURL = baseURL
        self.pid = process.pid
        self.logURL = logURL
        self.stderrURL = stderrURL
        self.directory = directory
        self.process = process
    }

    deinit {
        stop()
        if ProcessInfo.processInfo.environment["AUTHKIT_TEST_KEEP_PEER_LOGS"] == nil {
            try? FileManager.default.removeItem(at: directory)
        }
    }

    public var isRunning: Bool { process.isRunning }

    /// True once the peer has exited by itself with status 0 (not killed by a signal).
    public var exitedCleanly: Bool {
        process.termination == .exited(0)
    }

    /// Stops the peer (end of input; SIGTERM after 2 s; SIGKILL 5 s later) and waits for it. Idempotent.
    public func stop() {
        lock.lock()
        let wasStopped = stopped
        stopped = true
        lock.unlock()
        if !wasStopped { Self.terminate(process) }
    }

    /// The peer's request log and stderr so far (for failure messages and leak scans).
    public func logContents() -> String {
        [logURL, stderrURL].map { (try? String(contentsOf: $0, encoding: .utf8)) ?? "" }.joined(separator: "\n")
    }

    /// The last lines of the peer's logs, for failure messages.
    public func logTail(lines: Int = 40) -> String { Self.tail(of: [stderrURL, logURL], lines: lines) }

    /// A URL under the peer's base URL.
    public func url(_ path: String) -> URL {
        URL(string: baseURL.absoluteString + path) ?? baseURL
    }

    /// Sends a control-API request and returns the JSON answer; a non-2xx answer is an error.
    @discardableResult
    public func control(_ method: String, _ path: String, json body: PeerJSON? = nil) async throws -> PeerJSON {
        let response = try await TestHTTP.request(method, url(path), json: body)
        guard (200..<300).contains(response.status) else {
            throw PeerError.control(peer: name, request: "\(method) \(path)", status: response.status, body: response.text)
        }
        return try response.json()
    }

    private static func terminate(_ process: TestProcess) {
        // End of input is the peer's first stop signal; SIGTERM, then SIGKILL, if it lingers.
        // `wait` is true when the time ran out: only then is the peer still running. stop()
        // returns with the peer gone (a test that stops its provider must find it stopped).
        process.closeInput()
        if process.wait(timeout: 2, killing: false) {
            process.send(signal: SIGTERM)
            process.wait(timeout: 5)
        }
    }

    private static func tail(of files: [URL], lines: Int = 40) -> String {
        files.map { file -> String in
            let text = (try? String(contentsOf: file, encoding: .utf8)) ?? ""
            let last = text.split(separator: "\n", omittingEmptySubsequences: false).suffix(lines)
            return "[\(file.lastPathComponent)]\n" + last.joined(separator: "\n")
        }.joined(separator: "\n")
    }
}
