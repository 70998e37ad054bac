import Foundation
import TestSupport
import Testing

/// Help that cannot go stale: `authkit --help`, `help credential` and `help setup` name every
/// client of the adapter list, and `authkit help environment` names every environment variable
/// the sources read — a list derived from the sources themselves (`environment["NAME"]`,
/// `getenv("NAME")`, and every `"AUTHKIT_…"`, `"AWS_…"` or `"XDG_…"` literal), so a new
/// variable without a line of help fails here.
@Suite struct HelpTextTests {
    static func help(_ arguments: [String]) async throws -> ProcessResult {
        try await offThePool {
            try ProcessRunner.run(TestPaths.product("authkit"), arguments, environment: ["PATH": "/usr/bin:/bin"], timeout: 30)
        }
    }

    @Test func theHelpNamesEveryClient() async throws {
        let clients = ["git", "docker", "kubectl", "cargo", "aws", "gcloud"]
        for arguments in [["--help"], ["help", "credential"]] {
            let help = try await Self.help(arguments)
            #expect(help.status == 0, "\(help.stderr)")
            let text = help.stdout.replacingOccurrences(of: "\n", with: " ").split(separator: " ").joined(separator: " ")
            #expect(
                text.contains("git, docker, kubectl, cargo, aws or gcloud"), "`authkit \(arguments.joined(separator: " "))`: \(help.stdout)"
            )
        }
        let setup = try await Self.help(["help", "setup"])
        for client in clients + ["podman", "agent"] {
            #expect(setup.stdout.contains("  \(client) "), "`help setup` lists \(client): \(setup.stdout)")
        }
        let text = setup.stdout.replacingOccurrences(of: "\n", with: " ").split(separator: " ").joined(separator: " ")
        #expect(text.contains("git, docker, podman, kubectl, cargo, aws or gcloud"), "\(setup.stdout)")
    }

    /// The variables the sources read, by the rule above.
    static func variablesRead() throws -> Set<String> {
        let root = TestPaths.packageRoot.appendingPathComponent("Sources")
        let files = try #require(FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil))
        var names: Set<String> = []
        for case let file as URL in files where ["swift", "c"].contains(file.pathExtension) {
            let text = try String(contentsOf: file, encoding: .utf8)
            for match in text.matches(of: /environment\["([A-Za-z_][A-Za-z0-9_]*)"\]/) { names.insert(String(match.1)) }
            for match in text.matches(of: /getenv\("([A-Za-z_][A-Za-z0-9_]*)"\)/) { names.insert(String(match.1)) }
            // The journal's field names (AUTHKIT_EVENT …) are the one kind of such literal that
            // is not a variable: the file that writes them is read by the two rules above only.
            guard file.lastPathComponent != "AgentJournal.swift" else { continue }
            for match in text.matches(of: /"((?:AUTHKIT|AWS|XDG)_[A-Z0-9_]+)"/) { names.insert(String(match.1)) }
        }
        return names
    }

    /// Each option once, and only where it means something.
    @Test func setupHelpOffersWhatEachClientTakes() async throws {
        let gcloud = try await Self.help(["setup", "gcloud", "--help"])
        #expect(gcloud.stdout.components(separatedBy: "sts.googleapis.com/v1/token").count == 2, "one default: \(gcloud.stdout)")
        let cargo = try await Self.help(["setup", "cargo", "--help"])
        #expect(cargo.status == 0 && !cargo.stdout.contains("--username"), "cargo sends no user name: \(cargo.stdout)")
        let git = try await Self.help(["setup", "git", "--help"])
        #expect(git.stdout.contains("--username"), "\(git.stdout)")
        let aws = try await Self.help(["setup", "aws", "--help"])
        #expect(aws.stdout.contains("--aws-profile") && aws.stdout.contains("name authkit's sign-in"), "\(aws.stdout)")
    }

    @Test func everyVariableTheSourcesReadIsInHelpEnvironment() async throws {
        let names = try Self.variablesRead()
        #expect(names.isSuperset(of: ["AUTHKIT_GROUP", "AUTHKIT_AGENT_SOCK", "AWS_DEFAULT_REGION", "NO_COLOR"]), "\(names.sorted())")
        let help = try await Self.help(["help", "environment"])
        #expect(help.status == 0, "\(help.stderr)")
        let words = Set(help.stdout.split(whereSeparator: { !($0.isLetter || $0.isNumber || $0 == "_") }).map(String.init))
        let missing = names.subtracting(words).sorted()
        #expect(missing.isEmpty, "read by the sources but not in `authkit help environment`: \(missing)")
    }
}
