import Foundation
import SecretStore
import Synchronization
import Testing
import TestSupport
@testable import AuthKit

/// One sign-in test's world: a real OpenID provider on 127.0.0.1 (Tests/Peers), a private
/// plain-file store and a private lock directory in a temporary folder, a group name of its
/// own (single flight is per process and keyed by group), and a transcript of everything
/// authkit said (events, error descriptions) for the leak scan.
final class SignInHarness: Sendable {
    let provider: OIDCTestProvider
    let directory: URL
    let group: String
    let store: PlainFileStore
    let session: SharedSession
    /// `XDG_RUNTIME_DIR` and `XDG_STATE_HOME` of this harness: the refresh lock lives under the
    /// second.
    let environment: [String: String]
    let transcript = Transcript()

    init(
        _ implementation: OIDCTestProvider.Implementation = .authlib,
        options: OIDCTestProvider.Options = OIDCTestProvider.Options(),
        transport: any HTTPTransport = CurlHTTPTransport()
    ) throws {
        provider = try OIDCTestProvider.start(implementation, options: options)
        directory = try TestPaths.makeTemporaryDirectory(prefix: "authkit-signin")
        group = "test.signin.\(UUID().uuidString.prefix(8).lowercased())"
        store = PlainFileStore(directory: directory.appendingPathComponent("store").path)
        environment = ["XDG_RUNTIME_DIR": directory.path, "XDG_STATE_HOME": directory.path + "/state"]
        session = try SharedSession(group: group, store: store, transport: transport, environment: environment, lockTimeout: .seconds(20))
    }

    /// Starts a harness without blocking the cooperative pool (the provider takes a moment).
    static func start(
        _ implementation: OIDCTestProvider.Implementation = .authlib,
        options: OIDCTestProvider.Options = OIDCTestProvider.Options(),
        transport: any HTTPTransport = CurlHTTPTransport()
    ) async throws -> SignInHarness {
        try await offThePool { try SignInHarness(implementation, options: options, transport: transport) }
    }

    deinit {
        // Stopping waits for the peer to exit: not on the cooperative pool.
        let provider = self.provider, directory = self.directory
        Thread.detachNewThread {
            provider.stop()
            try? FileManager.default.removeItem(at: directory)
        }
    }

    /// The scripted browser's redirect back for `url`, not followed (off the cooperative pool).
    func finalRedirect(for url: URL, user: String = "ada") async throws -> URL {
        let browser = ScriptedBrowser(user: user, for: provider)
        return try await offThePool { try browser.finalRedirect(for: url) }
    }

    /// Approves (or denies) a device sign-in on the provider's page (off the cooperative pool).
    func approveDevice(_ authorization: DeviceAuthorization, user: String = "ada", deny: Bool = false) async throws -> ProcessResult {
        let browser = ScriptedBrowser(user: user, deny: deny, for: provider)
        return try await offThePool {
            try browser.approveDevice(verificationURI: authorization.verificationURI, userCode: authorization.userCode)
        }
    }

    /// Another session on the same store and lock (a second tool of the group), with its
    /// own JWKS cache and transport.
    func secondSession(transport: any HTTPTransport = CurlHTTPTransport()) throws -> SharedSession {
        try SharedSession(group: group, store: store, transport: transport, environment: environment, lockTimeout: .seconds(20))
    }

    /// The profile for `client` (default: the provider's public client).
    func profile(confidential: Bool = false, scopes: [String]? = nil) throws -> Profile {
        let client = try #require(confidential ? provider.confidentialClient : provider.publicClient, "the provider has no such client")
        let defaultScopes =
            provider.implementation == .glewlwyd ? ["openid", "offline_access"] : ["openid", "profile", "email", "offline_access"]
        return Profile(
            name: nil, issuer: provider.issuer.absoluteString, tenant: nil, clientID: client.clientID,
            clientSecret: confidential ? client.clientSecret.map(ClientSecret.init) : nil,
            scopes: scopes ?? defaultScopes, group: group, redirectPath: "/", redirectHost: .loopbackAddress,
            graphBaseURL: nil, storage: .plainFile, loginHint: nil, prompt: nil, domainHint: nil, sources: [:])
    }

    /// `Tests/Peers/browser` as the browser command, through env(1) so that its knobs
    /// (user, deny, glewlwyd's admin login) reach it without touching this process's environment.
    func browser(user: String = "ada", deny: Bool = false) -> BrowserLauncher {
        let knobs = ScriptedBrowser(user: user, deny: deny, for: provider).environment
        let assignments = knobs.filter { $0.key != "BROWSER" }.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        return BrowserLauncher(commands: [["/usr/bin/env"] + assignments + [ScriptedBrowser.wrapper.path]])
    }

    func flow(_ profile: Profile, browser: BrowserLauncher? = nil, transport: any HTTPTransport = CurlHTTPTransport()) -> SignInFlow {
        SignInFlow(profile: profile, session: session, transport: transport, browser: browser ?? self.browser())
    }

    /// Runs a sign-in, recording its events and its error (if any) in the transcript.
    func run(
        _ flow: SignInFlow, mode: SignInFlow.Mode = .browser, timeout: Duration = .seconds(60),
        pasted: AsyncStream<String>? = nil, onEvent: @escaping @Sendable (SignInFlow.Event) -> Void = { _ in }
    ) async -> Result<SignInResult, AuthKitError> {
        let transcript = self.transcript
        do {
            let result = try await flow.run(SignInFlow.Options(mode: mode, timeout: timeout), pasted: pasted) { event in
                transcript.add("\(event)")
                onEvent(event)
            }
            transcript.add("\(result.account.account) \(result.grantedScopes) \(result.location)")
            return .success(result)
        } catch {
            transcript.add(error.description)
            return .failure(error)
        }
    }

    /// Starts a `--no-browser` sign-in in the background and waits for the authorization URL it
    /// shows, so a test can play the browser (or an attacker) itself.
    func startWithoutBrowser() async throws -> (running: Task<Result<SignInResult, AuthKitError>, Never>, url: URL) {
        let urls = Mailbox<URL>()
        let flow = flow(try profile())
        let running = Task {
            await run(flow, mode: .noBrowser) { event in
                if case .openURL(let url, _) = event { urls.put(url) }
            }
        }
        return (running, try #require(await urls.next()))
    }

    /// Every record in the store, readable or not.
    func records() async throws -> [TokenRecord] {
        try await session.records().compactMap { try? $0.record.get() }
    }

    /// How many items the group holds in the store (readable or not).
    func itemCount() async throws -> Int {
        try await store.items(matching: ItemQuery(group: session.group), loadSecrets: false).count
    }

    /// Asserts that nothing authkit said (and nothing in `more`) contains a value the
    /// provider issued or received: codes, tokens, verifiers, client secrets.
    func expectNoSecretsLeaked(_ more: [String] = [], sourceLocation: SourceLocation = #_sourceLocation) async throws {
        // glewlwyd has no /_test/issued: there the tokens it issued are those in the store.
        let issued =
            provider.implementation == .glewlwyd
            ? try await records().flatMap { [$0.accessToken, $0.refreshToken, $0.idToken, $0.clientSecret].compactMap { $0 } }
            : try await provider.issuedSecrets()
        let secrets = issued.filter { $0.count >= 8 }
        let texts = transcript.all + more
        for secret in secrets {
            for text in texts where text.contains(secret) {
                Issue.record(
                    "a secret the provider issued appears in output: \(text.replacingOccurrences(of: secret, with: "<SECRET>").prefix(300))",
                    sourceLocation: sourceLocation)
            }
        }
    }
}

/// Lines authkit produced during a test (event and error descriptions), for the leak scan.
final class Transcript: Sendable {
    private let lines = Mutex<[String]>([])
    func add(_ line: String) { lines.withLock { $0.append(line) } }
    var all: [String] { lines.withLock { $0 } }
}

/// A transport that hands every request to `base`, after `rewrite` (tests that must change
/// what authkit sends, e.g. a tampered PKCE verifier) and `beforeSend`, and returns the answer
/// after `afterSend` (tests that make another process act at a precise moment).
final class InterceptingTransport: HTTPTransport {
    let base: any HTTPTransport
    let rewrite: @Sendable (HTTPRequest) -> HTTPRequest
    let beforeSend: @Sendable (HTTPRequest) async -> Void
    let afterSend: @Sendable (HTTPRequest, HTTPResponse) async -> Void
    private let sent = Mutex<[String]>([])

    init(
        base: any HTTPTransport = CurlHTTPTransport(), rewrite: @escaping @Sendable (HTTPRequest) -> HTTPRequest = { $0 },
        beforeSend: @escaping @Sendable (HTTPRequest) async -> Void = { _ in },
        afterSend: @escaping @Sendable (HTTPRequest, HTTPResponse) async -> Void = { _, _ in }
    ) {
        self.base = base
        self.rewrite = rewrite
        self.beforeSend = beforeSend
        self.afterSend = afterSend
    }

    /// `METHOD path` of every request sent.
    var requests: [String] { sent.withLock { $0 } }

    func send(_ request: HTTPRequest) async throws(HTTPError) -> HTTPResponse {
        let changed = rewrite(request)
        sent.withLock { $0.append("\(changed.method.rawValue) \(changed.url.path)") }
        await beforeSend(changed)
        let response = try await base.send(changed)
        await afterSend(changed, response)
        return response
    }

    /// The form fields of a POST body (nil for other requests).
    static func formFields(_ request: HTTPRequest) -> [(name: String, value: String)]? {
        guard request.method == .post, let body = request.body else { return nil }
        return FormEncoding.decode(String(decoding: body, as: UTF8.self))
    }

    /// `request` with its form field `name` replaced by `value`.
    static func replacingField(_ name: String, with value: String, in request: HTTPRequest) -> HTTPRequest {
        guard let fields = formFields(request), fields.contains(where: { $0.name == name }) else { return request }
        var copy = request
        copy.body = Array(FormEncoding.encode(fields.map { $0.name == name ? ($0.name, value) : $0 }).utf8)
        return copy
    }
}

/// Values handed from an event callback to the test body.
final class Mailbox<Value: Sendable>: Sendable {
    private let values = Mutex<[Value]>([])

    func put(_ value: Value) { values.withLock { $0.append(value) } }

    /// The next value, or nil when none came within `timeout` (a bound, not a measurement).
    func next(timeout: Duration = .seconds(60)) async -> Value? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let value = values.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) { return value }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return nil
    }
}
