import AuthKitCore
import Foundation
import SecretStore
import Testing

@testable import AuthKit

/// The lean client resolves a configuration file (AuthKitCore's `ConfigFile`, `ProfileSettings`,
/// `LeanTokenPlan`) only where authkit's `ProfileResolver` resolves it to the same group and
/// store without an error or a warning: random files, variables and flags.
@Suite struct LeanResolutionParityTests {
    static let path = "/nonexistent/ada/.config/authkit/config"
    /// (No storage record there: both fall back to the Secret Service.)
    static let environment = ["HOME": "/nonexistent/ada", "XDG_RUNTIME_DIR": "/run/user/1000"]

    static let values: [String: [String]] = [
        "issuer": [
            "https://login.example.com/v2.0", "https://login.microsoftonline.com/{tenantid}/v2.0", "http://127.0.0.1:8080/realms/dev",
            "http://localhost/x", "http://example.com", "https://a.example/?q=1", "https://user@a.example", "https://a.example/#f",
            "not a url", "https://{x}.example", "https://a.example:99999/", "https://", "HTTPS://A.EXAMPLE", "https://a..b/",
        ],
        "tenant": ["common", "contoso.onmicrosoft.com", "..", "a/b", "", String(repeating: "t", count: 129), "a b"],
        "client_id": ["6731de76-14a6-49ae-97bc-6eba6914391e", "has space", "", String(repeating: "c", count: 257), "é"],
        "client_secret": ["s3cret"],
        "scopes": ["openid profile", "a\\\"b", "a,b", "User.Read"],
        "group": ["com.example.a", "_bad", "a b", "", "-x", "org.example.dev", ".x"],
        "storage": ["secret-service", "kernel-keyring", "plain-file", "encrypted-file", "bogus", ""],
        "redirect_path": ["/", "/cb", "cb", "/a?b", "/a b"],
        "redirect_host": ["127.0.0.1", "localhost", "[::1]"],
        "redirect_port": ["8080", "0", "70000", "+80", "abc", "65535"],
        "resources": ["https://api.example", "api", "https://a#b", "https://a https://b"],
        "dpop": ["auto", "always", "never", "sometimes"],
        "graph_url": ["https://graph.microsoft.com/v1.0", "http://graph.example", "ftp://x", "http://127.0.0.1:1/g"],
        "login_hint": ["ada@example.com"], "prompt": ["select_account"], "domain_hint": ["contoso.com"],
    ]

    static func randomFile(_ generator: inout some RandomNumberGenerator) -> String {
        func pick<T>(_ list: [T]) -> T { list[Int.random(in: 0..<list.count, using: &generator)] }
        func chance(_ percent: Int) -> Bool { Int.random(in: 0..<100, using: &generator) < percent }
        var lines: [String] = []
        let names = ["work", "home", "microsoft", "dev"]
        if chance(80) {
            lines.append("[defaults]")
            if chance(70) { lines.append("profile = \(pick(names + ["nowhere", ""]))") }
            if chance(30) { lines.append("group = \(pick(values["group"] ?? []))") }
            if chance(30) { lines.append("storage = \(pick(values["storage"] ?? []))") }
        }
        for name in names where chance(50) {
            lines.append(chance(50) ? "[profile \(name)]" : "[profile.\(name)]")
            for key in ConfigFile.profileKeys.sorted() where chance(25) {
                let value = pick(values[key] ?? [""])
                lines.append(chance(30) ? "\(key) = \"\(value)\"" : "\(key) = \(value)")
            }
            if chance(5) { lines.append(pick(["bogus = 1", "not a line", "issuer = a", "issuer = b"])) }
        }
        if chance(20) { lines += ["[group \"\(pick(values["group"] ?? []))\"]", "confirm = \(pick(["once", "always", "maybe"]))"] }
        if chance(20) { lines += ["[credential \"https://git.example\"]", "profile = \(pick(names))"] }
        return lines.joined(separator: "\n") + "\n"
    }

    @Test func whatTheLeanClientResolvesAuthkitResolvesTheSame() throws {
        var generator = SystemRandomNumberGenerator()
        var served = 0
        for _ in 0..<4000 {
            let text = Self.randomFile(&generator)
            var environment = Self.environment
            if Int.random(in: 0..<4, using: &generator) == 0 {
                environment["AUTHKIT_GROUP"] = ["com.example.env", "_env", ""].randomElement(using: &generator)
            }
            if Int.random(in: 0..<4, using: &generator) == 0 {
                environment["AUTHKIT_STORAGE"] = ["kernel-keyring", "bogus", ""].randomElement(using: &generator)
            }
            var arguments = ["token"]
            if Bool.random(using: &generator) {
                arguments += ["--group", ["com.example.flag", ""].randomElement(using: &generator) ?? ""]
            }
            if Int.random(in: 0..<4, using: &generator) == 0 { arguments += ["--storage", "plain-file"] }
            if Int.random(in: 0..<8, using: &generator) == 0 { arguments += ["--insecure-storage"] }
            if Int.random(in: 0..<4, using: &generator) == 0 {
                arguments += ["--profile", ["work", "home", "microsoft", "nowhere", ""].randomElement(using: &generator) ?? ""]
            }
            let lean = try? ConfigFile.parse(text, path: Self.path, rules: .leanClient)
            let plan = LeanTokenPlan.make(
                arguments: arguments, environment: environment, configuration: { $0 == Self.path ? lean : nil },
                storageRecord: { _ in [:] })
            guard case .ask(let query, _) = plan else { continue }
            served += 1
            // The same file, read by authkit, resolved for the same command line.
            let file = try #require(try? ConfigFile.parse(text, path: Self.path), "authkit refuses what the lean client read:\n\(text)")
            #expect(file == lean, "\(text)")
            let resolver = ProfileResolver(file: file, environment: environment)
            var overrides = ProfileOverrides()
            if let index = arguments.firstIndex(of: "--group") { overrides.group = arguments[index + 1] }
            if arguments.contains("--insecure-storage") { overrides.storage = .plainFile }
            if arguments.contains("--storage") { overrides.storage = .plainFile }
            if let index = arguments.firstIndex(of: "--profile") { overrides.profile = arguments[index + 1] }
            let profile: Profile
            do { profile = try resolver.resolve(overrides) } catch {
                Issue.record("authkit refuses what the lean client resolved (\(error)):\n\(text)\n\(environment) \(arguments)")
                continue
            }
            #expect(resolver.warnings(using: profile).isEmpty, "\(text)")
            #expect(profile.group == query.group && profile.storage.rawValue == query.storage, "\(text)\n\(environment) \(arguments)")
            #expect((try? SecretGroup(profile.group)) != nil)
        }
        #expect(served > 400, "only \(served) files were served")
    }

    @Test func theSettingsListsAreAuthkits() {
        #expect(ProfileSettings.dpopModes == DPoPMode.allCases.map(\.rawValue))
        #expect(ProfileSettings.redirectHosts == LoopbackRedirectReceiver.RedirectHost.allCases.map(\.rawValue))
        #expect(ProfileSettings.tenantPlaceholder == IssuerMatcher.placeholder)
        #expect(ConfigFile.confirmValues == AgentGroupRule.Confirm.allCases.map(\.rawValue))
        // Every key a profile takes is judged, and a plain value of each passes.
        let plain = [
            "issuer": "https://login.example.com", "tenant": "common", "client_id": "cli", "client_secret": "s", "scopes": "openid",
            "group": "com.example.a", "redirect_path": "/", "redirect_host": "localhost", "graph_url": "https://graph.example/v1.0",
            "storage": "plain-file", "login_hint": "ada", "prompt": "login", "domain_hint": "example.com", "dpop": "auto",
            "redirect_port": "8080", "resources": "https://api.example",
        ]
        #expect(Set(plain.keys) == ConfigFile.profileKeys)
        for (key, value) in plain { #expect(ProfileSettings.passes(key, value), "\(key)") }
        #expect(!ProfileSettings.passes("unknown", "x"))
    }

    @Test("a URL the lean client takes as plain is one authkit takes for an issuer, a graph_url or a stored endpoint")
    func plainURLsAreAuthkits() throws {
        let alphabet = Array("abcXYZ019.-:/_~%@?#[]{}")
        var generator = SystemRandomNumberGenerator()
        var accepted = 0
        for _ in 0..<6000 {
            let tail = String((0..<Int.random(in: 0...24, using: &generator)).map { _ in alphabet.randomElement(using: &generator) ?? "a" })
            let url =
                (["https://", "http://", "http://127.0.0.1", "http://localhost:", "HTTP://"].randomElement(using: &generator) ?? "") + tail
            guard PlainURL.isPlain(url, loopbackHTTP: true) else { continue }
            accepted += 1
            #expect(throws: Never.self, "\(url)") { try ProfileResolver.checkIssuer(url, location: "test") }
            #expect(throws: Never.self, "\(url)") { _ = try EndpointPolicy.check(url, name: "graph_url") }
            // (And as a stored record's endpoint: StoredTokenRecord takes these.)
            #expect(throws: Never.self, "\(url)") {
                _ = try JSONDocument.storedRecord.decode(StoredURL.self, from: Array("\"\(url)\"".utf8))
            }
        }
        #expect(accepted > 80)
    }

    @Test func aGroupTheLeanClientTakesIsOneTheStoresTake() {
        let alphabet = Array("aZ09._-é ")
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<3000 {
            let name = String((0..<Int.random(in: 0...6, using: &generator)).map { _ in alphabet.randomElement(using: &generator) ?? "a" })
            #expect(GroupName.isStoreName(name) == ((try? SecretGroup(name)) != nil), "\(name)")
        }
    }
}
