import ArgumentParser
import AuthKit
import AuthKitCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `authkit completion bash|zsh|fish`: the shell completion script, visible (gh's
/// `gh completion -s SHELL`), not only ArgumentParser's hidden `--generate-completion-script`.
struct CompletionCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "completion",
        abstract: "Print the shell completion script for bash, zsh or fish.",
        discussion: """
            Subcommands, options and values complete, including profile and group names from \
            the config file.

            Examples:
              bash:  echo 'source <(authkit completion bash)' >> ~/.bashrc
              zsh:   authkit completion zsh > "${fpath[1]}/_authkit"
              fish:  authkit completion fish > ~/.config/fish/completions/authkit.fish
            """
    )

    @Argument(
        help: ArgumentHelp("bash, zsh or fish.", valueName: "shell"),
        completion: .list(CompletionShell.allCases.map(\.rawValue)))
    var shell: String

    func validate() throws {
        guard CompletionShell(rawValue: shell) != nil else {
            throw ValidationError("no completion for ‘\(shell)’; use bash, zsh or fish")
        }
    }

    func run() throws {
        guard let shell = CompletionShell(rawValue: shell) else { return }
        Terminal.printData(AuthKitCommand.completionScript(for: shell))
    }
}

/// Values the completion scripts ask authkit for at completion time: read from the config
/// file only (never the token store or the network), so completing is instant and silent.
enum ShellCompletion {
    /// Profile names: the file's `[profile NAME]` sections and the built-in profiles.
    @Sendable static func profiles(_ words: [String], _ index: Int, _ prefix: String) -> [String] {
        let file = try? ConfigFile.load(environment: ProcessInfo.processInfo.environment)
        let names = Set((file?.profiles.keys).map(Array.init) ?? []).union(Profile.builtIn.keys)
        return names.filter { $0.hasPrefix(prefix) }.sorted()
    }

    /// Group names the config file mentions (profiles' and `[defaults]`'s), and the default.
    @Sendable static func groups(_ words: [String], _ index: Int, _ prefix: String) -> [String] {
        let file = try? ConfigFile.load(environment: ProcessInfo.processInfo.environment)
        var names: Set<String> = [Profile.defaultGroup]
        if let group = file?.defaults?.entries["group"]?.value { names.insert(group) }
        for section in file?.profiles.values.map({ $0 }) ?? [] {
            if let group = section.entries["group"]?.value { names.insert(group) }
        }
        return names.filter { $0.hasPrefix(prefix) }.sorted()
    }
}
