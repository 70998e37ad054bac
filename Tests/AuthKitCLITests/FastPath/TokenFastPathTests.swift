import ArgumentParser
import AuthKitCore
import Testing

@testable import AuthKit
@testable import AuthKitCLI

@Suite("TokenFastPath")
struct TokenFastPathTests {
    func parsedByArgumentParser(_ arguments: [String]) throws -> TokenRequest {
        let command = try AuthKitCommand.parseAsRoot(arguments)
        return try #require(command as? TokenCommand).request
    }

    @Test(
        "whatever the fast path accepts, ArgumentParser parses to the same request",
        arguments: [
            ["token"],
            ["token", "--group", "com.example.shared"],
            ["token", "--group=com.example.shared", "--min-ttl=120"],
            ["token", "--min-ttl", "0", "--scope", "User.Read", "--scope", "Mail.Read"],
            ["token", "--insecure-storage", "--account", "ada@example.test", "--profile", "work"],
            ["token", "--profile=microsoft", "--scope=https://graph.microsoft.com/.default", "--min-ttl", "86400"],
        ])
    func agreesWithArgumentParser(_ arguments: [String]) throws {
        let fast = try #require(TokenFastPath.parse(arguments))
        #expect(fast == (try parsedByArgumentParser(arguments)))
    }

    @Test(
        "anything unusual is left to ArgumentParser (help, errors, other commands)",
        arguments: [
            ["token", "--help"], ["token", "-h"], ["token", "--bogus"], ["token", "--group"], ["token", "--group", "--min-ttl", "5"],
            ["token", "--min-ttl", "-5"], ["token", "--min-ttl", "abc"], ["token", "--min-ttl", "86401"],
            ["token", "--group", "a", "--group", "b"], ["token", "--insecure-storage=yes"], ["token", "extra"],
            ["status"], [], ["login", "token"],
        ])
    func declines(_ arguments: [String]) {
        #expect(TokenFastPath.parse(arguments) == nil)
    }

    @Test("the defaults match TokenCommand's")
    func defaults() throws {
        #expect(try #require(TokenFastPath.parse(["token"])) == TokenRequest())
        #expect(try parsedByArgumentParser(["token"]) == TokenRequest())
    }

    @Test("a sign-in goes through the fast path's options and back unchanged")
    func selectorRoundTrip() {
        var selector = SignInSelector()
        selector.profile = "work"
        selector.group = "com.example.g"
        selector.account = "ada"
        selector.insecureStorage = true
        selector.storage = .plainFile
        var options = FastPathOptions(selector: selector, scopes: ["s"], resources: ["https://a"], minTTL: 5)
        #expect(options.selector == selector && options.scopes == ["s"] && options.resources == ["https://a"] && options.minTTL == 5)
        options.selector = SignInSelector()
        #expect(options.selector == SignInSelector() && options.storage == nil && !options.insecureStorage)
    }

    /// The lean client's plan (`LeanTokenPlan`, no configuration file, an agent to ask).
    static let leanEnvironment = ["HOME": "/nonexistent/ada", "XDG_RUNTIME_DIR": "/run/user/1"]

    func leanPlan(_ arguments: [String]) -> LeanTokenPlan {
        LeanTokenPlan.make(
            arguments: arguments, environment: Self.leanEnvironment,
            configuration: { ConfigFile(path: $0, defaults: nil, profiles: [:]) }, storageRecord: { _ in [:] })
    }

    @Test(
        "the lean client asks the agent for what authkit resolves the fast path's request to, and declines what it declines",
        arguments: [
            ["token"], ["token", "--group", "com.example.shared"], ["token", "--group=com.example.shared", "--min-ttl=120"],
            ["token", "--min-ttl", "0", "--scope", "User.Read", "--scope", "Mail.Read"], ["token", "--insecure-storage", "--account", "a"],
            ["token", "--storage", "kernel-keyring", "--resource", "https://api.example.com"], ["token", "--help"], ["token", "--bogus"],
            ["token", "--group"], ["token", "--min-ttl", "86401"], ["token", "--group", "a", "--group", "b"], ["token", "extra"],
            ["status"],
        ])
    func leanClientAgrees(_ arguments: [String]) throws {
        guard let request = TokenFastPath.parse(arguments) else {
            #expect(leanPlan(arguments) == .handOff)
            return
        }
        guard case .ask(let query, _) = leanPlan(arguments) else {
            Issue.record("the lean client declines \(arguments)")
            return
        }
        // authkit's own resolution of the request (SignInSelector.resolveProfile, no file).
        var overrides = ProfileOverrides()
        overrides.profile = request.selector.profile
        overrides.group = request.selector.group
        if request.selector.insecureStorage { overrides.storage = .plainFile }
        if let storage = request.selector.storage { overrides.storage = storage }
        let resolver = ProfileResolver(file: try ConfigFile.parse("", path: "/nonexistent/config"), environment: Self.leanEnvironment)
        let profile = try resolver.resolve(overrides)
        #expect(query.group == profile.group && query.storage == profile.storage.rawValue)
        #expect(query.account == request.account && query.scopes == request.scopes && query.resources == request.resources)
        #expect(query.minTTL == request.minTTL)
    }
}
