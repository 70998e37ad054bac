import Foundation
import TestSupport
import Testing

/// One private world in which a test runs the built `authkit` as a person or a script would:
/// a throw-away Secret Service (its own D-Bus and gnome-keyring, HOME and XDG folders), our
/// strict OpenID provider on loopback, optionally the Graph fixture server accepting that
/// provider's tokens, and the scripted browser as `$BROWSER`.
///
/// Every run of `authkit` and `authkit-example` is recorded; ``assertNoSecretsLeaked()``
/// scans all of it, with the peers' and the keyring's logs, for every value the provider
/// issued. Only a successful `authkit token`'s standard output may hold one — its access token.
final class CLIHarness: @unchecked Sendable {
    struct Run: Sendable {
        var program: String
        var arguments: [String]
        var result: ProcessResult
        /// A successful run whose stdout carries a token on purpose: `authkit token` and the
        /// credential plug-ins (git, docker, kubectl answers).
        var printsToken: Bool {
            guard result.status == 0 else { return false }
            // cargo's provider answers `get` with {"Ok": …}; its other answers carry no token.
            let cargo = arguments == ["--cargo-plugin"] || arguments.starts(with: ["credential", "cargo"])
            if cargo && (program.hasSuffix("-credential-authkit") || program == "authkit" || program == "authkit-lean") {
                return result.stdout.contains(#"{"Ok":"#)
            }
            // Under a plug-in's own name (docker-credential-authkit …) the client passes its action.
            if program.hasSuffix("-credential-authkit") { return arguments.contains("get") }
            return (program == "authkit" || program == "authkit-lean") && (arguments.first == "token" || arguments.first == "credential")
        }
        /// `authkit token` as scripts use it: stdout is exactly one access token.
        var printsBareToken: Bool {
            printsToken && arguments.first == "token" && !arguments.contains("--json") && !arguments.contains("--id-token")
        }
        var title: String { ([program] + arguments).joined(separator: " ") }
    }

    let keyring: PrivateSecretService
    let provider: OIDCTestProvider
    let graph: GraphFixtureServer?
    let group: String
    /// Scratch space of the test (config files, the browser's log), removed by ``stop()``.
    let scratch: URL
    /// Every URL `$BROWSER` was asked to open, one per line.
    let browserLog: URL
    private let lock = NSLock()
    private var recorded: [Run] = []
    private var holdsSlot = false
    /// The store of this world's runs.
    private(set) var storage: Storage = .secretService

    /// The public client of the provider (PKCE required).
    static let clientID = "authkit-test-public"

    /// The store a world's `authkit` runs use (`AUTHKIT_STORAGE`), for tests that every store
    /// must pass (parameterised, not copied).
    enum Storage: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case secretService = "secret-service"
        case kernelKeyring = "kernel-keyring"
        var testDescription: String { rawValue }
    }

    /// Starts a world: keyring, provider and (with `graph`) the Graph server, off the
    /// cooperative thread pool (starting them blocks for a second or two). With the kernel
    /// keyring — the user's own, shared by all tests — the group gets a unique suffix.
    static func start(
        graph withGraph: Bool = false, graphUsers: URL? = nil, provider options: OIDCTestProvider.Options = .init(),
        group: String = "com.example.shared", storage: Storage = .secretService, agent: Bool = false,
        keyring provider: PrivateSecretService.Provider = .gnomeKeyring, prompter: Bool = false
    ) async throws -> CLIHarness {
        await WorldLimit.shared.acquire()
        let group =
            storage == .kernelKeyring && group == "com.example.shared" ? "com.example.kernel-\(UInt32.random(in: 0...UInt32.max))" : group
        do {
            let world = try await offThePool {
                try CLIHarness(
                    graph: withGraph, graphUsers: graphUsers, provider: options, group: group, keyring: provider, prompter: prompter)
            }
            world.storage = storage
            world.holdsSlot = true
            if agent { try await world.startAgent() }
            return world
        } catch {
            await WorldLimit.shared.release()
            throw error
        }
    }

    private init(
        graph withGraph: Bool = false, graphUsers: URL? = nil, provider options: OIDCTestProvider.Options = .init(),
        group: String = "com.example.shared", keyring provider: PrivateSecretService.Provider, prompter: Bool
    ) throws {
        for name in ["authkit", "authkit-example"] where !FileManager.default.isExecutableFile(atPath: TestPaths.product(name).path) {
            throw HarnessFailure(
                "\(TestPaths.product(name).path) is missing: build with `swift build --build-tests`, or run ./scripts/test")
        }
        keyring = try PrivateSecretService(provider: provider, prompter: prompter)
        self.provider = try OIDCTestProvider.start(.authlib, options: options)
        graph = withGraph ? try GraphFixtureServer.start(acceptTokensFrom: self.provider, users: graphUsers) : nil
        self.group = group
        scratch = try TestPaths.makeTemporaryDirectory(prefix: "authkit-cli")
        browserLog = scratch.appendingPathComponent("browser.log")
    }

    deinit { stop() }

    // MARK: The agent

    /// `authkit agent run` of this world, when it has one; every run then finds it through
    /// AUTHKIT_AGENT_SOCK.
    private(set) var agent: TestProcess?
    private var agentRuns: [TestProcess] = []

    /// The agent's socket in this world.
    var agentSocket: String { scratch.path + "/agent.sock" }

    /// Starts the world's agent (again, after ``stopAgent(signal:)``) and waits until it answers.
    func startAgent() async throws {
        var environment = self.environment
        environment["AUTHKIT_LOG"] = "info"
        let process = try TestProcess(TestPaths.product("authkit"), ["agent", "run", "--socket", agentSocket], environment: environment)
        lock.withLock {
            agent = process
            agentRuns.append(process)
        }
        try await until("the agent answers on \(agentSocket)", timeout: .seconds(30)) {
            guard process.isRunning else { return true }
            return process.stderrSoFar.contains("agent listening")
        }
        try #require(process.isRunning, "the agent ended: \(process.stderrSoFar)")
    }

    /// Ends the world's agent with `signal` (SIGKILL: as a crash would); its socket file stays
    /// behind then, as it would.
    func stopAgent(signal: Int32 = SIGTERM) async {
        guard let agent else { return }
        agent.send(signal: signal)
        _ = try? await offThePool { agent.wait(timeout: 10) }
        lock.withLock { self.agent = nil }
    }

    /// What the world's agents wrote on standard error (their log).
    var agentLog: String {
        lock.withLock { agentRuns.map(\.stderrSoFar).joined(separator: "\n") }
    }

    func stop() {
        let runningAgent = lock.withLock { agent }
        if let runningAgent {
            runningAgent.send(signal: SIGTERM)
            runningAgent.wait(timeout: 10)
        }
        if storage == .kernelKeyring {
            // The kernel keyring outlives the world: remove the group's items.
            _ = try? ProcessRunner.run(
                TestPaths.product("authkit"), ["logout", "--all", "--group", group], environment: environment, timeout: 30)
            Keyctl.removeGroup(group)
        }
        graph?.stop()
        provider.stop()
        keyring.stop()
        try? FileManager.default.removeItem(at: scratch)
        lock.lock()
        let release = holdsSlot
        holdsSlot = false
        lock.unlock()
        if release { Task { await WorldLimit.shared.release() } }
    }

    // MARK: Environments

    /// The private Secret Service's environment with nothing of the caller's authkit
    /// settings (`AUTHKIT_*`) or browser: only what a test adds counts.
    var environment: [String: String] {
        var environment = keyring.environment
        for key in environment.keys
        where (key.hasPrefix("AUTHKIT_") && !key.hasPrefix("AUTHKIT_TEST_")) || key == "BROWSER" {
            environment.removeValue(forKey: key)
        }
        environment["AUTHKIT_TEST_PYTHON"] = TestPaths.python.path
        if storage != .secretService { environment["AUTHKIT_STORAGE"] = storage.rawValue }
        if lock.withLock({ agent != nil }) { environment["AUTHKIT_AGENT_SOCK"] = agentSocket }
        return environment
    }

    var configDirectory: URL {
        URL(fileURLWithPath: keyring.environment["XDG_CONFIG_HOME"] ?? "/nonexistent").appendingPathComponent("authkit")
    }
    var stateDirectory: URL {
        URL(fileURLWithPath: keyring.environment["XDG_STATE_HOME"] ?? "/nonexistent").appendingPathComponent("authkit")
    }

    /// `$BROWSER` signing in as `user` and following the redirect to authkit's receiver,
    /// plus the Graph URL (stored with the sign-in) when there is a Graph server.
    func browserEnvironment(user: String = "ada", deny: Bool = false) -> [String: String] {
        var browser = ScriptedBrowser(user: user, deny: deny, logFile: browserLog, for: provider).environment
        if let graph { browser["AUTHKIT_GRAPH_URL"] = graph.graphBaseURL.absoluteString }
        return browser
    }

    /// `login` with everything on the command line: no configuration file at all.
    func loginArguments(_ extra: [String] = []) -> [String] {
        var arguments = ["login", "--issuer", provider.issuer.absoluteString, "--client-id", Self.clientID, "--group", group]
        if graph != nil { arguments += ["--scope", "User.ReadBasic.All"] }
        return arguments + extra
    }

    // MARK: Running

    /// Runs the built `authkit` in this world (at most `timeout` seconds).
    @discardableResult
    func authkit(_ arguments: [String], environment extra: [String: String] = [:], stdin: String? = nil, timeout: TimeInterval = 30)
        async throws -> ProcessResult
    {
        try await run("authkit", arguments, environment: extra, stdin: stdin, timeout: timeout)
    }

    /// Runs `authkit-example` (Examples/SharedSessionExample), the second, separate program.
    @discardableResult
    func example(_ arguments: [String] = [], environment extra: [String: String] = [:]) async throws -> ProcessResult {
        try await run("authkit-example", arguments.isEmpty ? [group] : arguments, environment: extra, stdin: nil, timeout: 30)
    }

    /// Runs the lean client (`authkit-lean` beside the built authkit, or the copy at `copy`) in
    /// this world; recorded and leak-scanned as authkit's runs are.
    @discardableResult
    func lean(_ arguments: [String], copy: URL? = nil, environment extra: [String: String] = [:], stdin: String? = nil) async throws
        -> ProcessResult
    {
        try await run("authkit-lean", arguments, environment: extra, stdin: stdin, timeout: 30, at: copy)
    }

    private func run(
        _ program: String, _ arguments: [String], environment extra: [String: String], stdin: String?, timeout: TimeInterval,
        at location: URL? = nil
    ) async throws -> ProcessResult {
        let environment = environment.merging(extra) { _, new in new }
        let executable = location ?? TestPaths.product(program)
        let result = try await offThePool {
            try ProcessRunner.run(executable, arguments, environment: environment, stdin: stdin, timeout: timeout)
        }
        // (A copy run under another name is recorded under that name.)
        record(Run(program: location?.lastPathComponent ?? program, arguments: arguments, result: result))
        #expect(!result.timedOut, "\(program) \(arguments.joined(separator: " ")) did not finish within \(Int(timeout)) s")
        return result
    }

    /// Starts `authkit` for a test that talks to it while it runs; finish it with ``finish(_:_:timeout:)``.
    func start(_ arguments: [String], environment extra: [String: String] = [:]) throws -> TestProcess {
        try TestProcess(TestPaths.product("authkit"), arguments, environment: environment.merging(extra) { _, new in new }, stdin: .pipe)
    }

    func finish(_ live: TestProcess, _ arguments: [String], timeout: TimeInterval = 60) async throws -> ProcessResult {
        let result = try await offThePool { live.finish(timeout: timeout) }
        record(Run(program: "authkit", arguments: arguments, result: result))
        #expect(!result.timedOut, "authkit \(arguments.joined(separator: " ")) did not finish within \(Int(timeout)) s")
        return result
    }

    /// Records a run made outside the harness (inside a sandbox, over SSH), so that the leak
    /// scan reads it; `arguments` are authkit's.
    func recordExternal(_ program: String = "authkit", _ arguments: [String], _ result: ProcessResult) {
        record(Run(program: program, arguments: arguments, result: result))
    }

    private func record(_ run: Run) {
        lock.lock()
        recorded.append(run)
        lock.unlock()
    }

    var runs: [Run] {
        lock.lock()
        defer { lock.unlock() }
        return recorded
    }

    /// Signs `user` in through `$BROWSER` and requires success.
    @discardableResult
    func signIn(user: String = "ada", _ extra: [String] = [], environment more: [String: String] = [:]) async throws -> ProcessResult {
        let result = try await authkit(
            loginArguments(extra), environment: browserEnvironment(user: user).merging(more) { _, new in new }, timeout: 60)
        try #require(result.status == 0, "login failed (\(result.status)): \(result.stderr)")
        return result
    }

    // MARK: Leak scan

    /// The private scalars of the DPoP keys stored in this world's keyring (the Secret Service
    /// worlds): they never leave the store either.
    func dpopPrivateKeys() -> [LeakScanner.Secret] {
        guard storage == .secretService,
            let listed = try? keyring.probe(["--show-secret", "list", "--group", group, "--secrets"]),
            listed.status == 0,
            let answer = try? JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [String: Any],
            let items = answer["items"] as? [[String: Any]]
        else { return [] }
        return items.compactMap { item in
            guard (item["kind"] as? String)?.hasPrefix("dpop-key ") == true,
                let secret = item["secret"] as? String,
                let stored = try? JSONSerialization.jsonObject(with: Data(secret.utf8)) as? [String: Any],
                let jwk = stored["jwk"] as? [String: Any], let d = jwk["d"] as? String
            else { return nil }
            return LeakScanner.Secret(kind: "dpop_private_key", value: d)
        }
    }

    /// Everything captured in this world that may never hold a secret.
    func capturedText() -> [(name: String, text: String)] {
        var sources: [(name: String, text: String)] = []
        for (index, run) in runs.enumerated() {
            if !run.printsToken { sources.append(("stdout of run \(index + 1), `\(run.title)`", run.result.stdout)) }
            sources.append(("stderr of run \(index + 1), `\(run.title)`", run.result.stderr))
        }
        sources.append(("the provider's logs", provider.process.logContents()))
        sources.append(("the agent's log", agentLog))
        if let graph { sources.append(("the Graph server's logs", graph.process.logContents())) }
        sources.append(("the browser's log", (try? String(contentsOf: browserLog, encoding: .utf8)) ?? ""))
        for name in ["keyring.log", "keyring.out", "bus.log"] {
            sources.append(
                ("the keyring's \(name)", (try? String(contentsOf: keyring.root.appendingPathComponent(name), encoding: .utf8)) ?? ""))
        }
        return sources
    }

    /// Fails the test for every value the provider issued that shows up in captured output,
    /// and checks that each `authkit token` printed exactly one access token the provider
    /// issued. Returns the number of secrets scanned for.
    @discardableResult
    func assertNoSecretsLeaked() async throws -> Int {
        let secrets = LeakScanner.secrets(issued: try await provider.issued()) + dpopPrivateKeys()
        for finding in LeakScanner.scan(capturedText(), for: secrets) {
            Issue.record("secret leaked: \(finding)")
        }
        let accessTokens = Set(secrets.filter { $0.kind == "access_token" }.map(\.value))
        for run in runs where run.printsBareToken {
            let printed = run.result.stdout.hasSuffix("\n") ? String(run.result.stdout.dropLast()) : run.result.stdout
            #expect(accessTokens.contains(printed), "`\(run.title)` printed something else than an access token the provider issued")
        }
        return secrets.count
    }
}

/// At most a few worlds at once: each is a dbus-daemon, a gnome-keyring, a Python provider
/// and maybe a Graph server; fifty of them starting together on two cores time out.
actor WorldLimit {
    static let shared = WorldLimit(slots: 4)
    private var free: Int
    private var waiting: [CheckedContinuation<Void, Never>] = []

    init(slots: Int) { free = slots }

    func acquire() async {
        if free > 0 {
            free -= 1
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    func release() {
        if waiting.isEmpty { free += 1 } else { waiting.removeFirst().resume() }
    }
}

/// A test precondition that is not met, with what to do about it.
struct HarnessFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
