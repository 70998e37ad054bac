@testable import AuthKit
import AuthKitCore
import Testing

/// Which entry of the config file a git URL or a docker registry gets: as git and docker
/// name them, never by a trick of the text, never at random.
@Suite struct CredentialMapTests {
    static func file(_ text: String) throws -> ConfigFile { try ConfigFile.parse(text, path: "/home/ada/.config/authkit/config") }

    static let orgs = """
        [credential "https://dev.example.com/orgA"]
        group = a

        [credential "https://dev.example.com/orgB"]
        group = b

        [credential "https://dev.example.com/%6frgC"]
        group = c
        """

    /// git sends `path=` already percent-decoded: `orgA/../orgB` may have been `orgA/%2e%2e/orgB`
    /// (orgB to the server) or `orgA/..%2ForgB` (still under orgA to the server, which gets the
    /// `%2F` as it was), and nobody can tell which: no token for a path with dot segments. What
    /// is still escaped in it was a literal `%` in the URL, a segment of its own on the server.
    @Test(
        "git's path with dot segments matches nothing; a plain one its entry",
        arguments: [
            ("orgA/../orgB/repo.git", nil), ("orgB/./repo.git", nil), ("orgA/repo.git", "a"),
            ("orgA/%2e%2e/orgB/repo.git", "a"), ("orgA/%252e%252e/orgB/repo.git", "a"), ("orgC/repo.git", "c"),
            // A `/` joined to a combining mark is one Character: `..` hidden from a split by
            // Character, not from curl (which sends `/%CC%81x.git` outside orgA).
            ("orgA/../\u{301}x.git", nil), ("orgA/..\u{200D}/orgB/repo.git", "a"),
        ] as [(String, String?)])
    func pathsAreNormalised(path: String, group: String?) throws {
        let target = try CredentialMap.gitTarget(protocol: "https", host: "dev.example.com", path: path, in: Self.file(Self.orgs))
        #expect(target?.group == group, "\(path)")
    }

    @Test("a path that climbs above the root matches nothing", arguments: ["../orgA/x", "orgA/../../orgA/x"])
    func invalidPathsMatchNothing(path: String) throws {
        #expect(try CredentialMap.gitTarget(protocol: "https", host: "dev.example.com", path: path, in: Self.file(Self.orgs)) == nil)
    }

    @Test("two entries for the same URL with different users: git's username= chooses; without one, refused as ambiguous with the lines")
    func usersChooseOrAreAmbiguous() throws {
        let file = try Self.file(
            """
            [credential "https://alice@git.example.com"]
            group = alice

            [credential "https://bob@git.example.com"]
            group = bob
            """)
        #expect(
            try CredentialMap.gitTarget(protocol: "https", host: "git.example.com", path: nil, username: "bob", in: file)?.group == "bob")
        #expect(
            try CredentialMap.gitTarget(protocol: "https", host: "git.example.com", path: nil, username: "alice", in: file)?.group
                == "alice")
        #expect(try CredentialMap.gitTarget(protocol: "https", host: "git.example.com", path: nil, username: "eve", in: file) == nil)
        do {
            _ = try CredentialMap.gitTarget(protocol: "https", host: "git.example.com", path: nil, in: file)
            Issue.record("an ambiguous mapping was chosen")
        } catch {
            #expect(
                error.description.contains(
                    "line 1 [credential \"https://alice@git.example.com\"], line 4 [credential \"https://bob@git.example.com\"]"))
            #expect(error.description.hasPrefix("/home/ada/.config/authkit/config: "))
        }
    }

    @Test("an entry with a user is more specific than one without; a longer path more still")
    func specificity() throws {
        let file = try Self.file(
            """
            [credential "https://git.example.com"]
            group = anyone

            [credential "https://ada@git.example.com"]
            group = ada

            [credential "https://git.example.com/team"]
            group = team
            """)
        #expect(
            try CredentialMap.gitTarget(protocol: "https", host: "git.example.com", path: nil, username: "ada", in: file)?.group == "ada")
        #expect(
            try CredentialMap.gitTarget(protocol: "https", host: "git.example.com", path: nil, username: "grace", in: file)?.group
                == "anyone")
        #expect(
            try CredentialMap.gitTarget(protocol: "https", host: "git.example.com", path: "team/x.git", username: "ada", in: file)?.group
                == "team")
    }

    @Test("a URL whose host cannot be told for sure matches nothing: text before a query, a fragment or a second @ is not user info")
    func urlThatHidesItsHost() throws {
        let file = try Self.file(
            """
            [credential "https://cargo.example.com"]
            group = cargo
            """)
        #expect(try CredentialMap.urlTarget("https://cargo.example.com/index/", in: file)?.group == "cargo")
        // An internationalised host as written in the mapping still matches.
        let idn = try Self.file("[credential \"https://bücher.example\"]\ngroup = idn\n")
        #expect(try CredentialMap.gitTarget(protocol: "https", host: "bücher.example", path: nil, in: idn)?.group == "idn")
        for url in [
            "https://evil.example?@cargo.example.com/", "https://evil.example#@cargo.example.com/",
            "https://evil.example\\@cargo.example.com/",
            "https://a@evil.example@cargo.example.com/", "https://cargo.example.com/index/?x", "https://cargo.ex%61mple.com/",
            // A delimiter joined to a combining mark: evil.example's for an RFC 3986 parser.
            "https://evil.example/\u{301}@cargo.example.com/", "https://evil.example?\u{301}@cargo.example.com/",
        ] {
            #expect(try CredentialMap.urlTarget(url, in: file) == nil, "\(url)")
        }
    }

    @Test("a token goes over https, or over http only to a loopback address")
    func carriesTokens() {
        for (scheme, host) in [
            ("https", "example.com"), ("http", "127.0.0.1:8080"), ("http", "localhost"), ("HTTP", "[::1]:80"), ("http", "::1"),
        ] {
            #expect(CredentialMap.carriesTokens(scheme: scheme, host: host), "\(scheme)://\(host)")
        }
        for (scheme, host) in [
            ("http", "example.com"), ("http", "127.0.0.1.evil.example"), ("http", "127.+0.0.1"), ("http", "127.-0.0.1"),
            ("http", "127.0.0.08"), ("http", "[::2]"),
            ("ftp", "127.0.0.1"), ("ssh", "x"),
        ] {
            #expect(!CredentialMap.carriesTokens(scheme: scheme, host: host), "\(scheme)://\(host)")
        }
    }

    @Test("an IPv6 literal in a section name parses, and the rest of the file with it")
    func ipv6Section() throws {
        let file = try Self.file(
            """
            [credential "https://[::1]:8443"]
            group = local

            [registry "[::1]:5000"]
            group = registry
            """)
        #expect(try CredentialMap.gitTarget(protocol: "https", host: "[::1]:8443", path: nil, in: file)?.group == "local")
        #expect(CredentialMap.registryTarget(server: "[::1]:5000", in: file)?.group == "registry")
    }

    @Test("a mapping may name the store of its sign-in; an unknown store is a configuration error at its line")
    func mappingStorage() throws {
        let file = try Self.file("[registry \"r.example\"]\nstorage = kernel-keyring\n")
        #expect(CredentialMap.registryTarget(server: "r.example", in: file)?.storage == "kernel-keyring")
        #expect(throws: ConfigurationError.self) { try Self.file("[registry \"r.example\"]\nstorage = floppy\n") }
        do { _ = try Self.file("[credential \"https://x\"]\nstorage = floppy\n") } catch {
            #expect("\(error)".contains(":2:") && "\(error)".contains("not a store"), "\(error)")
        }
    }

    @Test(
        "docker's server URL is parsed, not searched for ://",
        arguments: [
            ("registry.example.com", "registry.example.com"), ("https://registry.example.com/v2/", "registry.example.com"),
            ("REGISTRY.example.com:5000/x", "registry.example.com:5000"),
            ("evil.example/x://registry.example.com", "evil.example"),
            ("https://registry.example.com@evil.example/", "evil.example"),
            ("evil.example?x=://registry.example.com", "evil.example"),
            ("https://reg istry.example.com", ""), ("1http://registry.example.com", "1http:"),
            ("https://evil.example/\u{301}@registry.example.com/", ""),
        ])
    func registryHosts(server: String, host: String) {
        #expect(CredentialMap.registryHost(server) == host, "\(server)")
    }

    @Test("a registry entry is found only for its own host")
    func registryTricks() throws {
        let file = try Self.file("[registry \"registry.example.com\"]\ngroup = g\n")
        for server in [
            "evil.example/x://registry.example.com", "https://registry.example.com@evil.example", "registry.example.com.evil.example",
        ] {
            #expect(CredentialMap.registryTarget(server: server, in: file) == nil, "\(server)")
        }
        #expect(CredentialMap.registryTarget(server: "https://registry.example.com/v1/", in: file)?.group == "g")
    }
}
