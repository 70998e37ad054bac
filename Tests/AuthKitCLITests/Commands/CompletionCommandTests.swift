import Foundation
import TestSupport
import Testing

/// `authkit completion bash|zsh|fish` is visible and its scripts complete profile and
/// group names from the config file — checked by running the bash script's completion
/// function in a real bash, as bash does on Tab.
@Suite struct CompletionCommandTests {
    typealias Home = ConfigurationErrorTests.Home

    @Test func everyShellGetsAScriptAndTheCommandIsListed() async throws {
        let home = try Home()
        for shell in ["bash", "zsh", "fish"] {
            let result = try await home.authkit(["completion", shell])
            #expect(result.status == 0 && result.stdout.contains("authkit"), "\(shell): \(result.stderr)")
        }
        let bogus = try await home.authkit(["completion", "tcsh"])
        #expect(bogus.status == 2 && bogus.stderr.contains("use bash, zsh or fish"), "\(bogus.stderr)")
        let help = try await home.authkit(["--help"])
        #expect(help.stdout.contains("completion"), "listed in --help: \(help.stdout)")
    }

    /// What bash offers after `authkit WORDS… CURRENT<Tab>`.
    static func complete(_ home: Home, _ words: [String], current: String) async throws -> [String] {
        let bin = TestPaths.product("authkit").deletingLastPathComponent().path
        let line = (["authkit"] + words + [current]).joined(separator: " ")
        let quoted = (["authkit"] + words + [current]).map { "'\($0)'" }.joined(separator: " ")
        let script = """
            source <(authkit completion bash)
            COMP_WORDS=(\(quoted)); COMP_CWORD=\(words.count + 1); COMP_LINE='\(line)'; COMP_POINT=${#COMP_LINE}
            _authkit authkit '\(current)' '\(words.last ?? "authkit")'
            printf '%s\\n' "${COMPREPLY[@]}"
            """
        let environment = home.environment.merging(["PATH": "\(bin):/usr/bin:/bin"]) { _, new in new }
        let result = try await offThePool {
            try ProcessRunner.run(URL(fileURLWithPath: "/bin/bash"), ["-c", script], environment: environment, timeout: 30)
        }
        #expect(result.status == 0, "\(result.stderr)")
        return result.stdout.split(separator: "\n").map(String.init)
    }

    @Test func profileAndGroupNamesCompleteFromTheConfigFile() async throws {
        let home = try Home()
        try home.write(
            """
            [defaults]
            group = com.example.default

            [profile work]
            issuer = https://login.example.com
            group = com.example.team

            [profile wiki]
            """)
        #expect(try await Self.complete(home, ["token", "--profile"], current: "w") == ["wiki", "work"])
        #expect(try await Self.complete(home, ["status", "--profile"], current: "") == ["microsoft", "wiki", "work"])
        #expect(try await Self.complete(home, ["login", "--group"], current: "com.example.t") == ["com.example.team"])
        #expect(
            try await Self.complete(home, ["logout", "--group"], current: "") == ["authkit", "com.example.default", "com.example.team"])
        #expect(try await Self.complete(home, [], current: "con") == ["config"])
    }
}
