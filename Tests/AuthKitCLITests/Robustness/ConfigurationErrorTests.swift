import Foundation
import TestSupport
import Testing

/// Bad flags and bad configuration: a clear message naming what is wrong (for files: the
/// file, the line and the key) and exit 2, before anything is attempted — no store, no network.
@Suite struct ConfigurationErrorTests {
    /// A HOME with a config folder and no D-Bus: reaching the token store would exit 3, so a 2
    /// proves the error was caught first.
    final class Home: @unchecked Sendable {
        let root: URL
        var configFile: URL { root.appendingPathComponent(".config/authkit/config") }
        init() throws {
            root = try TestPaths.makeTemporaryDirectory(prefix: "authkit-config")
            try FileManager.default.createDirectory(at: configFile.deletingLastPathComponent(), withIntermediateDirectories: true)
        }
        deinit { try? FileManager.default.removeItem(at: root) }

        var environment: [String: String] {
            [
                "HOME": root.path, "PATH": "/usr/bin:/bin", "XDG_CONFIG_HOME": root.appendingPathComponent(".config").path,
                "XDG_RUNTIME_DIR": root.path, "DBUS_SESSION_BUS_ADDRESS": "unix:path=\(root.path)/no-bus",
            ]
        }

        func write(_ text: String, mode: Int = 0o600) throws {
            try text.write(to: configFile, atomically: false, encoding: .utf8)
            try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: configFile.path)
        }

        func authkit(_ arguments: [String], environment extra: [String: String] = [:]) async throws -> ProcessResult {
            let result = try await Authkit.run(arguments, environment: environment.merging(extra) { _, new in new })
            #expect(!result.timedOut)
            return result
        }
    }

    static func expectUsageError(_ result: ProcessResult, _ fragments: [String], sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(result.status == 2, "exit \(result.status): \(result.stderr)", sourceLocation: sourceLocation)
        #expect(result.stdout.isEmpty, sourceLocation: sourceLocation)
        for fragment in fragments {
            #expect(result.stderr.contains(fragment), "'\(fragment)' missing from: \(result.stderr)", sourceLocation: sourceLocation)
        }
    }

    @Test(arguments: [
        (["status", "--bogus"], "unknown option '--bogus'"),
        (["login", "--browser-please"], "unknown option '--browser-please'"),
        (["token", "--jsonn"], "unknown option '--jsonn'"),
        (["frobnicate"], "unknown command 'frobnicate'"),
        (["login", "--paste", "--device-code"], "exclude each other"),
        (["login", "--no-browser", "--paste"], "exclude each other"),
        (["login", "--timeout", "5"], "--timeout must be between 10 and 3600 seconds"),
        (["logout", "--all", "--account", "ada@example.test"], "--account and --all exclude each other"),
        (["token", "--min-ttl", "abc"], "the value 'abc' is invalid for '--min-ttl <seconds>'"),
        (["token", "--min-ttl", "-5"], "--min-ttl"),
        (["token", "--min-ttl", "90000"], "--min-ttl must be between 0 and 86400 seconds"),
        (["search", "ada", "--top", "0"], "--top must be between 1 and 999"),
        (["search", "ada", "--top", "1000"], "--top must be between 1 and 999"),
        (["search", "  "], "the search text is empty"),
        (["search"], "missing expected argument '<text>'"),
    ])
    func badFlagsExitTwo(arguments: [String], message: String) async throws {
        let home = try Home()
        try await Self.expectUsageError(home.authkit(arguments), [message])
    }

    @Test func aClientSecretIsNeverAFlag() async throws {
        let home = try Home()
        let secret = "s3cret-that-must-not-be-echoed"
        for arguments in [
            ["login", "--client-secret", secret], ["login", "--client-secret=\(secret)"], ["token", "--client-secret", secret],
        ] {
            let result = try await home.authkit(arguments)
            Self.expectUsageError(result, ["AUTHKIT_CLIENT_SECRET", "client_secret in the config file"])
            #expect(!result.stderr.contains(secret), "the value is never repeated")
        }
        let help = try await home.authkit(["login", "--help"])
        #expect(!help.stdout.contains("--client-secret"), "and it is not offered")
    }

    @Test func configSyntaxErrorsNameFileLineAndKey() async throws {
        let home = try Home()
        let path = home.configFile.path
        try home.write("[profile work]\nissuer https://login.example.com\n")
        try await Self.expectUsageError(home.authkit(["status", "--profile", "work"]), ["\(path):2: expected key = value"])

        try home.write("# mine\n[profile work]\nissuer = https://login.example.com\nclientid = abc\n")
        try await Self.expectUsageError(
            home.authkit(["status", "--profile", "work"]), ["\(path):4: 'clientid': unknown key (did you mean client_id?)"])

        try home.write("[profiles work]\n")
        try await Self.expectUsageError(home.authkit(["status"]), ["\(path):1: unknown section [profiles work]"])

        try home.write("[profile work]\nissuer = \"https://login.example.com\n")
        try await Self.expectUsageError(home.authkit(["status", "--profile", "work"]), ["\(path):2:", "'issuer'"])

        try home.write("[profile work]\nissuer = ftp://login.example.com\nclient_id = abc\n")
        try await Self.expectUsageError(home.authkit(["login", "--profile", "work"]), ["\(path):2: 'issuer':"])

        try home.write("[profile work]\nissuer = http://login.example.com\nclient_id = abc\n")
        try await Self.expectUsageError(home.authkit(["login", "--profile", "work"]), ["\(path):2: 'issuer':", "https"])

        try home.write("[defaults]\ngroup = not a group!\n")
        try await Self.expectUsageError(home.authkit(["token"]), ["\(path):2: 'group':", "not a valid group"])

        try home.write("[profile work]\nstorage = floppy\n")
        try await Self.expectUsageError(
            home.authkit(["status", "--profile", "work"]),
            ["\(path):2: 'storage': use secret-service, kernel-keyring, plain-file or encrypted-file"])
    }

    /// A typo in a profile the command does not use is a warning, not a failure; the
    /// command that uses that profile still fails on it.
    @Test func aBrokenProfileBlocksOnlyTheCommandsThatUseIt() async throws {
        let home = try Home()
        let path = home.configFile.path
        try home.write(
            """
            [defaults]
            profile = work

            [profile work]
            issuer = https://login.example.com
            client_id = abc

            [profile other]
            isuer = https://other.example.com
            """)
        for arguments in [["token"], ["logout"], ["status"]] {
            let result = try await home.authkit(arguments)
            #expect(result.status != 2, "\(arguments): \(result.stderr)")
            let warnings = result.stderr.split(separator: "\n").filter { $0.hasPrefix("authkit: warning: ") }
            #expect(
                warnings == [
                    "authkit: warning: \(path):9: 'isuer': unknown key (did you mean issuer?); known keys: client_id, client_secret, domain_hint, dpop, graph_url, group, issuer, login_hint, prompt, redirect_host, redirect_path, redirect_port, resources, scopes, storage, tenant (in [profile other], not used here; commands using it fail until it is fixed)"
                ],
                "\(arguments): \(result.stderr)")
        }
        try await Self.expectUsageError(
            home.authkit(["token", "--profile", "other"]), ["\(path):9: 'isuer': unknown key (did you mean issuer?)"])
    }

    @Test func unknownProfilesSayWhichExist() async throws {
        let home = try Home()
        try home.write("[defaults]\nprofile = wrok\n\n[profile work]\nissuer = https://login.example.com\n")
        try await Self.expectUsageError(
            home.authkit(["status"]), ["\(home.configFile.path):2: 'profile': there is no profile 'wrok' (known: microsoft, work)"])
        try await Self.expectUsageError(
            home.authkit(["status", "--profile", "nope"]), ["--profile: 'profile': there is no profile 'nope'"])
        try await Self.expectUsageError(
            home.authkit(["token"], environment: ["AUTHKIT_PROFILE": "nope"]),
            ["environment variable AUTHKIT_PROFILE: 'profile': there is no profile 'nope'"])
    }

    @Test func environmentErrorsNameTheVariable() async throws {
        let home = try Home()
        try await Self.expectUsageError(
            home.authkit(["status"], environment: ["AUTHKIT_STORAGE": "floppy"]), ["environment variable AUTHKIT_STORAGE: 'storage'"])
        try await Self.expectUsageError(
            home.authkit(["status"], environment: ["AUTHKIT_GROUP": "bad group"]), ["environment variable AUTHKIT_GROUP: 'group'"])
        try await Self.expectUsageError(home.authkit(["status", "--group", "bad/group"]), ["--group: 'group'"])
        try await Self.expectUsageError(
            home.authkit(["login"], environment: ["AUTHKIT_ISSUER": "https://login.example.com/?x=1", "AUTHKIT_CLIENT_ID": "abc"]),
            ["environment variable AUTHKIT_ISSUER: 'issuer'"])
        try await Self.expectUsageError(
            home.authkit(["status"], environment: ["AUTHKIT_CONFIG": home.root.appendingPathComponent("missing").path]), ["missing"])
    }

    @Test func loginWithoutIssuerOrClientIDSaysHowToGiveThem() async throws {
        let home = try Home()
        try await Self.expectUsageError(home.authkit(["login", "--client-id", "abc"]), ["'issuer'", "--issuer", "AUTHKIT_ISSUER"])
        try await Self.expectUsageError(
            home.authkit(["login", "--profile", "microsoft"]), ["'client_id'", "--client-id", "AUTHKIT_CLIENT_ID"])
    }

    @Test func aClientSecretInAFileOthersCanReadIsRefused() async throws {
        let home = try Home()
        let secret = "file-secret-that-must-not-be-echoed"
        try home.write("[profile work]\nissuer = https://login.example.com\nclient_id = abc\nclient_secret = \(secret)\n", mode: 0o644)
        let refused = try await home.authkit(["status", "--profile", "work"])
        Self.expectUsageError(refused, [home.configFile.path, "'client_secret'", "chmod 600"])
        #expect(!refused.stderr.contains(secret))

        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: home.configFile.path)
        let accepted = try await home.authkit(["status", "--profile", "work"])
        #expect(accepted.status == 3, "the file is fine now; the store (no D-Bus here) is what fails: \(accepted.stderr)")
        #expect(!accepted.stderr.contains(secret))
    }

    @Test func helpAndVersionExitZero() async throws {
        let home = try Home()
        let help = try await home.authkit(["--help"])
        #expect(help.status == 0)
        for command in ["login", "status", "token", "logout", "search"] {
            #expect(help.stdout.contains("  \(command) "), "\(command) is listed")
        }
        let version = try await home.authkit(["--version"])
        #expect(version.status == 0)
        #expect(!version.stdout.isEmpty)
    }
}

/// Help topics a command's --help cannot hold, and no silent typos.
@Suite struct HelpTopicTests {
    @Test(arguments: ["environment", "exit-codes", "config"])
    func topicsExist(topic: String) throws {
        let result = try ProcessRunner.run(
            TestPaths.product("authkit"), ["help", topic], environment: ["HOME": NSTemporaryDirectory()], timeout: 30)
        #expect(result.status == 0 && !result.stdout.isEmpty, "\(result.stderr)")
        #expect(result.stdout.split(separator: "\n").allSatisfy { $0.count <= 80 }, "fits 80 columns")
        if topic == "environment" {
            for name in [
                "AUTHKIT_CONFIG", "AUTHKIT_PROFILE", "AUTHKIT_CLIENT_ID", "AUTHKIT_ISSUER", "AUTHKIT_GROUP", "AUTHKIT_STORAGE",
                "AUTHKIT_LOG",
            ] {
                #expect(result.stdout.contains(name), "\(name) missing")
            }
        }
    }

    static let commands = [
        [], ["login"], ["status"], ["token"], ["logout"], ["search"], ["credential"], ["credential", "git"],
        ["credential", "docker"], ["credential", "kubectl"], ["exec"], ["setup"], ["setup", "git"], ["setup", "docker"],
        ["setup", "kubectl"], ["config"], ["config", "show"], ["config", "path"], ["config", "map"], ["completion"], ["jwt"],
        ["jwt", "verify"],
    ]

    /// Every --help fits an 80-column terminal (ArgumentParser wraps prose, but not usage
    /// lines or indented examples), and the top one names the settings' sources and the codes.
    @Test func everyHelpFitsEightyColumns() throws {
        for command in Self.commands {
            let result = try ProcessRunner.run(
                TestPaths.product("authkit"), command + ["--help"], environment: ["HOME": NSTemporaryDirectory(), "COLUMNS": "80"],
                timeout: 30)
            #expect(result.status == 0, "\(command): \(result.stderr)")
            for line in result.stdout.split(separator: "\n") where line.count > 80 {
                Issue.record("authkit \(command.joined(separator: " ")) --help: \(line.count) columns: \(line)")
            }
        }
        let top = try ProcessRunner.run(
            TestPaths.product("authkit"), ["--help"], environment: ["HOME": NSTemporaryDirectory(), "COLUMNS": "80"], timeout: 30)
        for fragment in ["~/.config/authkit/config", "authkit help environment", "authkit help exit-codes", "authkit config", "Examples:"] {
            #expect(top.stdout.contains(fragment), "\(fragment) missing from --help")
        }
    }

    @Test func versionOnlyAtTheTopAndDidYouMeanForCommands() throws {
        let environment = ["HOME": NSTemporaryDirectory()]
        let version = try ProcessRunner.run(TestPaths.product("authkit"), ["status", "--version"], environment: environment, timeout: 30)
        #expect(
            version.status == 2
                && version.stderr == "authkit: --version is an option of authkit itself, not of a command\nhint: run `authkit --version`\n",
            "\(version.stderr)")
        let passedOn = try ProcessRunner.run(TestPaths.product("authkit"), ["exec", "--help"], environment: environment, timeout: 30)
        #expect(passedOn.status == 0 && passedOn.stdout.hasPrefix("OVERVIEW:"), "`exec --help` is help, not a command: \(passedOn.stderr)")
        let typo = try ProcessRunner.run(TestPaths.product("authkit"), ["stauts"], environment: environment, timeout: 30)
        #expect(
            typo.status == 2 && typo.stderr.hasPrefix("authkit: unknown command 'stauts' (did you mean status?)\nhint: "), "\(typo.stderr)")
        #expect(typo.stderr.split(separator: "\n").count == 2, "one error line and one hint")
    }

    @Test func unknownTopicsAndLogLevelsAreUsageErrors() throws {
        let unknown = try ProcessRunner.run(
            TestPaths.product("authkit"), ["help", "nonexistent"], environment: ["HOME": NSTemporaryDirectory()], timeout: 30)
        #expect(unknown.status == 2 && unknown.stderr.hasPrefix("authkit: no command or help topic"), "\(unknown.stderr)")
        let typo = try ProcessRunner.run(
            TestPaths.product("authkit"), ["help", "confg"], environment: ["HOME": NSTemporaryDirectory()], timeout: 30)
        #expect(typo.stderr.contains("did you mean config?"), "\(typo.stderr)")
        let log = try ProcessRunner.run(
            TestPaths.product("authkit"), ["status"], environment: ["HOME": NSTemporaryDirectory(), "AUTHKIT_LOG": "bogus"], timeout: 30)
        #expect(log.status == 2 && log.stderr.contains("AUTHKIT_LOG"), "\(log.stderr)")
    }
}
