import Foundation
import TestSupport
import Testing

/// `authkit login` with a real browser: Debian's chromium, headless, driven through
/// chromedriver by selenium (`Tests/Peers/chromium_browser.py`, launched by authkit as
/// `$BROWSER`), through our provider's login form to the pages authkit's loopback receiver
/// serves — checked as chromium rendered them: text, address, headers, what the page loaded.
///
/// One chromium per test; serialized, so the machine runs one at a time.
@Suite(.serialized) struct RealBrowserTests {
    /// The JSON report chromium_browser.py writes (`AUTHKIT_TEST_CHROMIUM_REPORT`).
    struct Report: Decodable {
        var ok: Bool
        var error: String?
        var elapsed: Double?
        var chromium: String?
        var pages: [Page]
        var requests: [String]
        var foreignRequests: [String]

        func page(_ name: String) throws -> Page {
            try #require(pages.first { $0.name == name }, "chromium recorded no \(name) page: \(error ?? "no error")")
        }
    }

    struct Page: Decodable {
        var name: String
        var url: String
        var title: String
        var text: String
        var html: String
        var status: Int?
        var headers: [String: String]
        var redirects: [Redirect]
        var resources: [String]
        var console: [String]
        var history: [String]
    }

    struct Redirect: Decodable {
        var status: Int?
        var path: String
        var queryNames: [String]
        var location: String
        var locationHasQuery: Bool
        var headers: [String: String]
    }

    static let wrapper = TestPaths.packageRoot.appendingPathComponent("Tests/Peers/chromium")
    /// Should chromium fail, `login` gives up within a minute rather than the default wait.
    static let bounded = ["--timeout", "60"]

    /// `$BROWSER` = chromium for this world, reporting to `report`.
    func environment(_ world: CLIHarness, scenario: String = "sign-in", deny: Bool = false, report: URL) throws -> [String: String] {
        for program in ["/usr/bin/chromium", "/usr/bin/chromedriver"] {
            try #require(FileManager.default.isExecutableFile(atPath: program), "\(program) is missing: run ./scripts/bootstrap")
        }
        var environment = world.browserEnvironment(user: "ada", deny: deny)
        environment["BROWSER"] = Self.wrapper.path
        environment["AUTHKIT_TEST_CHROMIUM_REPORT"] = report.path
        environment["AUTHKIT_TEST_CHROMIUM_SCENARIO"] = scenario
        return environment
    }

    /// authkit does not wait for `$BROWSER`: wait (bounded) for chromium's report (the
    /// driver gives up by itself after 60 s).
    func report(at url: URL, timeout: Duration = .seconds(90)) async throws -> (Report, String) {
        let deadline = ContinuousClock.now + timeout
        while !FileManager.default.fileExists(atPath: url.path), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(100))
        }
        let data = try Data(contentsOf: url)
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return (try decoder.decode(Report.self, from: data), String(decoding: data, as: UTF8.self))
    }

    /// What every page authkit serves must be, as rendered: at `/authkit/<word>` on the
    /// receiver (reached by one 303 from the callback, whose query went no further), no query
    /// in the address, nothing loaded, the strict headers on both responses.
    func expectClean(_ page: Page, word: String, status: Int, text: String, redirectedFrom callbackPath: String = "/") throws {
        let address = try #require(URLComponents(string: page.url), "\(page.name): \(page.url)")
        #expect(address.scheme == "http" && address.host == "127.0.0.1", "\(page.name): \(page.url)")
        #expect(address.path == "/authkit/\(word)", "\(page.name): \(page.url)")
        #expect(address.query == nil && address.fragment == nil, "\(page.name): the address keeps a query: \(page.url)")
        #expect(!page.url.contains("code") && !page.url.contains("state"), "\(page.name): \(page.url)")
        #expect(page.status == status, "\(page.name)")
        #expect(page.text.contains(text), "\(page.name) shows: \(page.text)")
        #expect(page.title.hasPrefix("authkit: "), "\(page.name): title \(page.title)")

        // The browser got here by one 303 from the callback, carrying no query along.
        #expect(page.redirects.count == 1, "\(page.name): \(page.redirects.map(\.path))")
        if let redirect = page.redirects.first {
            #expect(redirect.status == 303)
            #expect(redirect.path == callbackPath)
            #expect(redirect.queryNames.contains("state"), "\(redirect.queryNames)")
            #expect(redirect.queryNames.contains("code") || redirect.queryNames.contains("error"), "\(redirect.queryNames)")
            #expect(redirect.location == "/authkit/\(word)" && !redirect.locationHasQuery)
            expectStrictHeaders(redirect.headers, "\(page.name)'s 303")
        }
        expectStrictHeaders(page.headers, page.name)

        // Nothing loaded, nothing that could load: no script, image, style sheet or link out.
        #expect(page.resources.isEmpty, "\(page.name) loaded \(page.resources)")
        for marker in ["<script", "<img", "<link", "<iframe", "<form", "src=", "href=", "://"] {
            #expect(!page.html.lowercased().contains(marker), "\(page.name) has \(marker)")
        }
        #expect(!page.console.contains { $0.contains("Content Security Policy") }, "\(page.name): \(page.console)")

        // The tab's back/forward list ends on the clean address and has no callback with a query.
        #expect(page.history.last == page.url, "\(page.name): \(page.history)")
        let port = address.port
        for entry in page.history where URLComponents(string: entry)?.port == port {
            #expect(URLComponents(string: entry)?.query == nil, "\(page.name): the history keeps a callback with a query")
        }
    }

    /// `Content-Security-Policy` allowing nothing but inline style, and the other headers.
    func expectStrictHeaders(_ headers: [String: String], _ what: String) {
        let policy = headers["content-security-policy"] ?? ""
        var directives: [String: [String]] = [:]
        for directive in policy.split(separator: ";") {
            let words = directive.split(separator: " ").map(String.init)
            if let name = words.first { directives[name] = Array(words.dropFirst()) }
        }
        #expect(directives["default-src"] == ["'none'"], "\(what): CSP \(policy)")
        for (name, sources) in directives where name != "style-src" {
            #expect(sources == ["'none'"], "\(what): \(name) allows \(sources)")
        }
        #expect([["'unsafe-inline'"], ["'none'"]].contains(directives["style-src"] ?? ["'none'"]), "\(what): CSP \(policy)")
        #expect(headers["cache-control"] == "no-store", "\(what)")
        #expect(headers["referrer-policy"] == "no-referrer", "\(what)")
        #expect(headers["x-content-type-options"] == "nosniff", "\(what)")
    }

    /// The report (page HTML, addresses, text) holds none of the provider's secrets, and
    /// neither does anything else the world captured.
    func expectNoSecrets(_ world: CLIHarness, report: String) async throws {
        let secrets = LeakScanner.secrets(issued: try await world.provider.issued())
        for finding in LeakScanner.scan([("chromium's report", report)], for: secrets) {
            Issue.record("secret in what chromium showed: \(finding)")
        }
        try await world.assertNoSecretsLeaked()
    }

    @Test func signInShowsACleanSuccessPage() async throws {
        let world = try await CLIHarness.start()
        defer { world.stop() }
        let reportFile = world.scratch.appendingPathComponent("chromium.json")
        let login = try await world.authkit(
            world.loginArguments(Self.bounded), environment: try environment(world, report: reportFile), timeout: 90)
        #expect(login.status == 0, "\(login.stderr)")
        #expect(login.stderr.contains("Signed in as Ada Lovelace (ada@example.test)"))
        let (report, text) = try await report(at: reportFile)
        #expect(report.ok, "\(report.error ?? "")")
        try expectClean(
            try report.page("result"), word: "signed-in", status: 200,
            text: "Sign-in complete. You can close this window and return to the terminal.")
        #expect(report.foreignRequests.isEmpty, "chromium left loopback: \(report.foreignRequests)")
        // The receiver was still there when chromium followed the 303 (login waits for that).
        #expect(report.requests.contains { $0.hasSuffix("/authkit/signed-in") }, "\(report.requests)")
        try await expectNoSecrets(world, report: text)
    }

    @Test func deniedConsentShowsTheProviderError() async throws {
        let world = try await CLIHarness.start()
        defer { world.stop() }
        let reportFile = world.scratch.appendingPathComponent("chromium.json")
        let login = try await world.authkit(
            world.loginArguments(Self.bounded), environment: try environment(world, deny: true, report: reportFile), timeout: 90)
        #expect(login.status == 1, "\(login.stderr)")
        #expect(login.stderr.contains("access_denied"))
        let (report, text) = try await report(at: reportFile)
        #expect(report.ok, "\(report.error ?? "")")
        let page = try report.page("result")
        try expectClean(page, word: "failed", status: 400, text: "access_denied")
        #expect(page.text.contains("Sign-in failed"), "\(page.text)")
        #expect(report.foreignRequests.isEmpty, "chromium left loopback: \(report.foreignRequests)")
        try await expectNoSecrets(world, report: text)
    }

    @Test func forgedStateShowsNotThisSignInAndTheRealOneStillWorks() async throws {
        let world = try await CLIHarness.start()
        defer { world.stop() }
        let reportFile = world.scratch.appendingPathComponent("chromium.json")
        let login = try await world.authkit(
            world.loginArguments(Self.bounded), environment: try environment(world, scenario: "forged-state", report: reportFile),
            timeout: 90)
        #expect(login.status == 0, "the forged callback does not end the sign-in: \(login.stderr)")
        let (report, text) = try await report(at: reportFile)
        #expect(report.ok, "\(report.error ?? "")")
        try expectClean(
            try report.page("forged"), word: "ignored", status: 400,
            text: "This request does not answer the sign-in in progress, so it was ignored.")
        try expectClean(try report.page("result"), word: "signed-in", status: 200, text: "Sign-in complete.")
        #expect(report.foreignRequests.isEmpty, "chromium left loopback: \(report.foreignRequests)")
        try await expectNoSecrets(world, report: text)
    }

    /// The callback opened again (a reload of an old tab, the back button) while authkit still
    /// redeems the code — the provider holds its token answer until chromium is done.
    @Test func secondCallbackShowsAlreadyUsed() async throws {
        let world = try await CLIHarness.start()
        defer { world.stop() }
        try await world.provider.setFault(.hold(grantType: "authorization_code", seconds: 60))
        let reportFile = world.scratch.appendingPathComponent("chromium.json")
        let arguments = world.loginArguments(Self.bounded)
        let login = try world.start(arguments, environment: try environment(world, scenario: "second-callback", report: reportFile))
        let (report, text) = try await report(at: reportFile)
        try await world.provider.release()
        let result = try await world.finish(login, arguments, timeout: 60)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(report.ok, "\(report.error ?? "")")
        try expectClean(try report.page("result"), word: "signed-in", status: 200, text: "Sign-in complete.")
        try expectClean(
            try report.page("second"), word: "already-used", status: 410,
            text: "This sign-in has already finished. You can close this window.")
        #expect(report.foreignRequests.isEmpty, "chromium left loopback: \(report.foreignRequests)")
        let log = try await world.provider.log()
        #expect(log.count(grantType: "authorization_code") == 1, "the second callback redeemed nothing")
        try await expectNoSecrets(world, report: text)
    }
}
