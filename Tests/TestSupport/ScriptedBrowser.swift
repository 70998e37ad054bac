import Foundation

/// The scripted user agent (`Tests/Peers/browser.py`): signs in at either test provider's
/// form and follows the redirect to the client's loopback receiver.
public struct ScriptedBrowser: Sendable {
    /// Who signs in (`ada`, `grace`, `alan`, `sean` on the authlib provider).
    public var user: String
    /// Press "Deny" instead of signing in.
    public var deny: Bool
    /// Each URL the browser opened is appended here (`AUTHKIT_TEST_BROWSER_LOG`).
    public var logFile: URL?
    /// Write the final redirect here instead of following it (paste-mode tests).
    public var redirectFile: URL?
    /// More environment, e.g. a provider's `browserEnvironment`.
    public var extraEnvironment: [String: String]

    /// A browser for `provider` (pass it: glewlwyd needs extra environment).
    public init(
        user: String = "ada", deny: Bool = false, logFile: URL? = nil, redirectFile: URL? = nil, for provider: OIDCTestProvider? = nil
    ) {
        self.user = user
        self.deny = deny
        self.logFile = logFile
        self.redirectFile = redirectFile
        self.extraEnvironment = provider?.browserEnvironment ?? [:]
    }

    /// `Tests/Peers/browser`, the bash wrapper to put in `$BROWSER`.
    public static var wrapper: URL { TestPaths.packageRoot.appendingPathComponent("Tests/Peers/browser") }
    static var script: URL { TestPaths.packageRoot.appendingPathComponent("Tests/Peers/browser.py") }
    static var deviceScript: URL { TestPaths.packageRoot.appendingPathComponent("Tests/Peers/device.py") }

    /// The environment for a process that opens URLs with `$BROWSER` (authkit's login).
    public var environment: [String: String] {
        var env = [
            "BROWSER": Self.wrapper.path,
            "AUTHKIT_TEST_BROWSER_USER": user,
            "AUTHKIT_TEST_BROWSER_DENY": deny ? "1" : "0",
            "AUTHKIT_TEST_PYTHON": TestPaths.python.path,
            "PYTHONDONTWRITEBYTECODE": "1",
        ]
        if let logFile { env["AUTHKIT_TEST_BROWSER_LOG"] = logFile.path }
        if let redirectFile { env["AUTHKIT_TEST_BROWSER_REDIRECT_FILE"] = redirectFile.path }
        env.merge(extraEnvironment) { _, extra in extra }
        return env
    }

    /// Runs the browser on `url` and waits (exit 0: the receiver answered 2xx).
    public func open(_ url: URL, timeout: TimeInterval = 40) throws -> ProcessResult {
        try run([url.absoluteString], timeout: timeout)
    }

    /// Signs in and returns the redirect to the client (carrying `code`/`error`, `state`, `iss`)
    /// without following it.
    public func finalRedirect(for url: URL, timeout: TimeInterval = 40) throws -> URL {
        let result = try run(["--print-redirect", url.absoluteString], timeout: timeout)
        let line = result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        guard result.status == 0, let redirect = URL(string: line) else {
            throw PeerError.launchFailed(peer: "browser", reason: "exit \(result.status): \(result.stderr)")
        }
        return redirect
    }

    /// Approves (or denies) a device-code sign-in at `verificationURI`.
    public func approveDevice(verificationURI: URL, userCode: String, timeout: TimeInterval = 30) throws -> ProcessResult {
        try Self.ensurePython()
        var arguments = [Self.deviceScript.path, "--user", user]
        if deny { arguments.append("--deny") }
        arguments += [verificationURI.absoluteString, userCode]
        return try ProcessRunner.run(TestPaths.python, arguments, extraEnvironment: environment, timeout: timeout)
    }

    private func run(_ arguments: [String], timeout: TimeInterval) throws -> ProcessResult {
        try Self.ensurePython()
        var all = [Self.script.path, "--user", user]
        if deny { all.append("--deny") }
        return try ProcessRunner.run(TestPaths.python, all + arguments, extraEnvironment: environment, timeout: timeout)
    }

    private static func ensurePython() throws {
        guard FileManager.default.isExecutableFile(atPath: TestPaths.python.path) else {
            throw PeerError.pythonMissing(TestPaths.python)
        }
    }
}
