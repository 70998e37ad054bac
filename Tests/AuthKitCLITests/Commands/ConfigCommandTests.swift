import Foundation
import StrictJSON
import TestSupport
import Testing

/// `authkit config` shows the effective settings and where each came from, in text
/// and JSON; `authkit config path` says where the file is. No store, no network (the Home has
/// no D-Bus: touching the store would fail).
@Suite struct ConfigCommandTests {
    typealias Home = ConfigurationErrorTests.Home

    static let file = """
        [defaults]
        profile = work

        [profile work]
        issuer = https://login.example.com/tenant/v2.0
        client_id = abc-123
        client_secret = do-not-show-this-secret
        scopes = openid profile offline_access api://x/read
        """

    @Test func eachSettingNamesItsSource() async throws {
        let home = try Home()
        try home.write(Self.file)
        let path = home.configFile.path
        let result = try await home.authkit(["config", "--storage", "kernel-keyring"], environment: ["AUTHKIT_GROUP": "com.example.team"])
        #expect(result.status == 0, "\(result.stderr)")
        let rows = Dictionary(
            uniqueKeysWithValues: result.stdout.split(separator: "\n").compactMap { line -> (String, [String])? in
                let cells = line.split(separator: "  ", omittingEmptySubsequences: true).map { $0.trimmingCharacters(in: .whitespaces) }
                return cells.count >= 2 ? (cells[0], Array(cells.dropFirst())) : nil
            })
        #expect(rows["profile"] == ["work", "\(path):2"])
        #expect(rows["issuer"] == ["https://login.example.com/tenant/v2.0", "\(path):5"])
        #expect(rows["client_id"] == ["abc-123", "\(path):6"])
        #expect(rows["client_secret"] == ["(set)", "\(path):7"])
        #expect(rows["group"] == ["com.example.team", "environment variable AUTHKIT_GROUP"])
        #expect(rows["storage"] == ["kernel-keyring", "--storage"])
        #expect(rows["redirect_path"] == ["/", "built-in default"])
        #expect(rows["tenant"] == ["not set"])
        #expect(result.stdout.contains("config file: \(path)\n") || result.stdout.hasSuffix("config file: \(path)\n"))
        #expect(!result.stdout.contains("do-not-show-this-secret") && !result.stderr.contains("do-not-show-this-secret"))
    }

    @Test func jsonIsOneCompactLineWhenPiped() async throws {
        let home = try Home()
        try home.write(Self.file)
        let result = try await home.authkit(["config", "--json", "--profile", "work"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.split(separator: "\n").count == 1, "compact when piped: \(result.stdout)")
        guard case .object(let report) = try JSONValue(parsing: result.stdout.trimmingCharacters(in: .newlines)),
            case .object(let file)? = report["config_file"], case .array(let settings)? = report["settings"]
        else {
            Issue.record("unexpected shape: \(result.stdout)")
            return
        }
        #expect(file["path"] == .string(home.configFile.path) && file["exists"] == .bool(true))
        let byKey = Dictionary(
            uniqueKeysWithValues: settings.compactMap { setting -> (String, JSONObject)? in
                guard case .object(let object) = setting, case .string(let key)? = object["key"] else { return nil }
                return (key, object)
            })
        #expect(byKey["profile"]?["source"] == .string("--profile"))
        #expect(byKey["client_secret"]?["value"] == .string("(set)"))
        #expect(byKey["tenant"]?["value"] == .null)
        #expect(!result.stdout.contains("do-not-show-this-secret"))
    }

    @Test func jsonIsIndentedOnATerminal() async throws {
        let home = try Home()
        try home.write(Self.file)
        // script(1) gives authkit a pseudo-terminal, as a person's shell would.
        let command = "\(TestPaths.product("authkit").path) config --json"
        let environment = home.environment
        let result = try await offThePool {
            try ProcessRunner.run(
                URL(fileURLWithPath: "/usr/bin/script"), ["-qec", command, "/dev/null"], environment: environment, timeout: 30)
        }
        #expect(result.status == 0, "\(result.stdout)")
        #expect(result.stdout.contains("\n  \"settings\""), "indented for a person: \(result.stdout)")
    }

    @Test func pathFollowsTheEnvironment() async throws {
        let home = try Home()
        let standard = try await home.authkit(["config", "path"])
        #expect(standard.status == 0 && standard.stdout == home.configFile.path + "\n", "\(standard.stdout)\(standard.stderr)")
        let explicit = try await home.authkit(["config", "path"], environment: ["AUTHKIT_CONFIG": "/etc/authkit/team.conf"])
        #expect(explicit.stdout == "/etc/authkit/team.conf\n")
    }

    /// The owner asks directly which sign-in a URL or a registry gets, and from which entry;
    /// exit 1, with what to run, when nothing maps it.
    @Test func mapSaysWhichEntryAURLOrRegistryGets() async throws {
        let home = try Home()
        try home.write(
            """
            [credential "https://dev.example.com/orgA"]
            group = a
            scopes = s1 s2

            [registry "registry.example.com"]
            profile = work
            """)
        let git = try await home.authkit(["config", "map", "https://dev.example.com/orgA/repo.git"])
        #expect(git.status == 0, "\(git.stderr)")
        #expect(git.stdout.contains("[credential \"https://dev.example.com/orgA\"] (\(home.configFile.path):1)"), "\(git.stdout)")
        #expect(git.stdout.contains("group     a") && git.stdout.contains("scopes    s1 s2"))
        let registry = try await home.authkit(["config", "map", "registry.example.com/team/image"])
        #expect(registry.status == 0 && registry.stdout.contains("[registry \"registry.example.com\"] (\(home.configFile.path):5)"))
        let climbing = try await home.authkit(["config", "map", "https://dev.example.com/orgA/../orgB/repo.git"])
        #expect(climbing.status == 1 && climbing.stdout.isEmpty)
        #expect(climbing.stderr.contains("git gets nothing from authkit") && climbing.stderr.contains("authkit setup git --host"))
        let plain = try await home.authkit(["config", "map", "http://dev.example.com/orgA/repo.git"])
        #expect(plain.status == 1 && plain.stdout.isEmpty && plain.stderr.contains("unencrypted"), "\(plain.stderr)")
    }

    @Test func aBadSettingIsTheSameUsageErrorAsEverywhere() async throws {
        let home = try Home()
        try home.write("[profile work]\nissuer = http://login.example.com\n")
        ConfigurationErrorTests.expectUsageError(
            try await home.authkit(["config", "--profile", "work"]), ["\(home.configFile.path):2: 'issuer':"])
    }
}
