import ArgumentParser
import AuthKit
import AuthKitCore
@testable import AuthKitCLI
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

    /// Every command (with its subcommands) is in `--help` and the README's command table, and
    /// every key the config file takes is in the README and in `authkit help config`.
    @Test func everyCommandAndConfigKeyIsDocumented() async throws {
        let readme = try String(contentsOf: TestPaths.packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
        func commands(_ type: any ParsableCommand.Type, prefix: [String]) -> [[String]] {
            let name = type.configuration.commandName.map { [$0] } ?? []
            let path = prefix + name
            let subcommands = type.configuration.subcommands.flatMap { commands($0, prefix: path) }
            return (name.isEmpty ? [] : [path]) + subcommands
        }
        let lines = readme.split(separator: "\n").map(String.init)
        for path in AuthKitCommand.configuration.subcommands.flatMap({ commands($0, prefix: []) }) {
            // A command's default subcommand (`config show`, `account list`) is the command itself.
            guard let name = path.last else { continue }
            let parentType = path.count > 1 ? Self.type(of: Array(path.dropLast())) : nil
            if parentType?.configuration.defaultSubcommand?.configuration.commandName == name { continue }
            // Named as typed: `authkit agent log`, or among alternatives: `authkit agent start\|stop`.
            let parent = "authkit " + path.dropLast().joined(separator: " ")
            let named = lines.contains { line in
                line.contains("authkit " + path.joined(separator: " "))
                    || (line.contains(parent.trimmingCharacters(in: .whitespaces) + " ") && line.contains("\\|\(name)"))
            }
            #expect(named, "README lacks authkit \(path.joined(separator: " "))")
            let help = try await Self.help(Array(path.dropLast()) + ["--help"])
            #expect(help.stdout.contains(name), "`\(path.dropLast().joined(separator: " ")) --help` lacks \(name)")
        }
        let config = try await Self.help(["help", "config"])
        let keys = ConfigFile.profileKeys.union(ConfigFile.credentialKeys).union(ConfigFile.defaultsKeys).union(ConfigFile.groupKeys)
        for key in keys.sorted() {
            #expect(
                readme.contains("`\(key)`") || readme.contains("`\(key) =") || readme.contains("\n\(key) = "),
                "README lacks the config key \(key)")
            #expect(config.stdout.contains(key), "`authkit help config` lacks \(key)")
        }
    }

    /// The command type at `path` (`["agent", "log"]`).
    static func type(of path: [String]) -> (any ParsableCommand.Type)? {
        var current: any ParsableCommand.Type = AuthKitCommand.self
        for word in path {
            guard let next = current.configuration.subcommands.first(where: { $0.configuration.commandName == word }) else { return nil }
            current = next
        }
        return current
    }
}
