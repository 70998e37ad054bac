import AuthKitCore
import ArgumentParser
import Foundation
import Testing

@testable import AuthKitCLI

/// The fast paths of `token` and the plug-ins are checked against ArgumentParser's own
/// declaration of each command: every option the command declares is either read by the fast
/// path — to exactly what ArgumentParser parses — or named here as left to ArgumentParser. A
/// new option declared without a decision fails here, so an option is never written once
/// and silently missing from the other parser.
@Suite("Fast paths follow the declarations")
struct FastPathDeclarationTests {
    /// Options the fast paths leave to ArgumentParser (it parses them, or refuses them).
    static let tokenLeftToArgumentParser: Set<String> = [
        "json", "allow-shorter", "id-token", "exchange", "audience", "client-secret", "help", "version",
    ]
    static let pluginLeftToArgumentParser: Set<String> = ["client-secret", "help", "version"]
    /// What a client's command line needs besides the option tried (AWS: the role).
    static let required: [String: [String]] = ["aws": ["--role-arn", "arn:aws:iam::123456789012:role/dev"]]
    /// Options a client refuses (AWS's credentials have no scopes): ArgumentParser says why.
    static let refused: [String: Set<String>] = [
        "aws": [OptionName.scope, OptionName.resource], "gcloud": [OptionName.scope, OptionName.resource],
    ]

    /// Each declared option of `command` (its long name) and whether it takes a value, from
    /// ArgumentParser's own description of the command (`--experimental-dump-help`).
    static func declaredOptions(_ command: [String]) throws -> [(name: String, takesValue: Bool)] {
        var dump: String?
        do {
            _ = try AuthKitCommand.parseAsRoot(command + ["--experimental-dump-help"])
        } catch {
            dump = AuthKitCommand.fullMessage(for: error)
        }
        let text = try #require(dump)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        let info = try #require(object["command"] as? [String: Any])
        let arguments = info["arguments"] as? [[String: Any]] ?? []
        return arguments.compactMap { argument in
            let names = (argument["names"] as? [[String: Any]] ?? []).filter { $0["kind"] as? String == "long" }
            guard let name = names.first?["name"] as? String else { return nil }
            return (name, argument["kind"] as? String == "option")
        }
    }

    /// A value ArgumentParser accepts for the option.
    static func sample(_ name: String) -> String {
        switch name {
        case OptionName.minTTL: return "120"
        case OptionName.storage: return "kernel-keyring"
        case "token-type": return "id-token"
        case "role-arn": return "arn:aws:iam::123456789012:role/dev"
        case "duration": return "900"
        case OptionName.resource: return "https://api.example.test/"
        default: return "x"
        }
    }

    @Test func everyOptionOfTokenIsReadByTheFastPathOrLeftToArgumentParser() throws {
        let declared = try Self.declaredOptions(["token"])
        #expect(declared.count >= 10, "the declaration was read: \(declared.map(\.name))")
        for option in declared {
            let arguments = ["token", "--" + option.name] + (option.takesValue ? [Self.sample(option.name)] : [])
            if let fast = TokenFastPath.parse(arguments) {
                let slow = try #require(try AuthKitCommand.parseAsRoot(arguments) as? TokenCommand).request
                #expect(fast == slow, "--\(option.name)")
                #expect(!Self.tokenLeftToArgumentParser.contains(option.name), "--\(option.name) is read by the fast path")
            } else {
                #expect(Self.tokenLeftToArgumentParser.contains(option.name), "token's fast path ignores --\(option.name)")
            }
        }
        #expect(Self.tokenLeftToArgumentParser.isSubset(of: Set(declared.map(\.name))))
    }

    /// `exec` as the lean client plans it (`LeanTokenPlan+Exec`): every option ExecCommand
    /// declares is planned to what ArgumentParser parses, or handed over to it.
    @Test func everyOptionOfExecIsPlannedByTheLeanClientOrLeftToArgumentParser() throws {
        let declared = try Self.declaredOptions(["exec"])
        #expect(declared.contains { $0.name == "env" }, "the declaration was read: \(declared.map(\.name))")
        let left = Self.pluginLeftToArgumentParser
        for option in declared {
            let value = option.name == OptionName.profile ? "microsoft" : option.name == "env" ? "GH_TOKEN" : Self.sample(option.name)
            let arguments = ["exec", "--" + option.name] + (option.takesValue ? [value] : []) + ["--", "gh", "api"]
            let plan = LeanTokenPlan.make(
                arguments: arguments, environment: ["HOME": "/home/ada", "XDG_RUNTIME_DIR": "/run/user/1000"],
                configuration: { ConfigFile(path: $0, defaults: nil, profiles: [:]) }, storageRecord: { _ in [:] })
            guard case .exec(let query, _, let variable, let command) = plan else {
                #expect(left.contains(option.name), "the lean client's exec ignores --\(option.name)")
                continue
            }
            #expect(!left.contains(option.name), "--\(option.name) is planned by the lean client")
            let slow = try #require(try AuthKitCommand.parseAsRoot(arguments) as? ExecCommand)
            let selector = slow.options.session.selector(account: slow.options.account)
            #expect(variable == slow.variable && command == slow.command.filter { $0 != "--" }, "--\(option.name)")
            #expect(query.minTTL == slow.options.minTTL && query.scopes == slow.options.scopes, "--\(option.name)")
            #expect(query.resources == slow.options.resources && query.account == selector.account, "--\(option.name)")
            #expect(query.group == (selector.group ?? "authkit"), "--\(option.name)")
            #expect(
                query.storage == (selector.insecureStorage ? "plain-file" : selector.storage?.rawValue ?? "secret-service"),
                "--\(option.name)")
        }
    }

    @Test(arguments: CredentialAdapters.all.map { $0.client })
    func everyOptionOfAPlugInIsReadByTheFastPathOrLeftToArgumentParser(client: String) throws {
        let adapter = try #require(CredentialAdapters.named(client))
        let action = adapter.actions.first.map { [$0] } ?? []
        let declared = try Self.declaredOptions(["credential", client])
        #expect(declared.contains { $0.name == OptionName.group }, "the declaration was read: \(declared.map(\.name))")
        for option in declared {
            var words = ["--" + option.name] + (option.takesValue ? [Self.sample(option.name)] : [])
            if let required = Self.required[client], required[0] != words[0] { words += required }
            let arguments = ["credential", client] + words + action
            let left = Self.pluginLeftToArgumentParser.union(Self.refused[client] ?? [])
            if let fast = CredentialFastPath.parse(arguments) {
                let slow = try #require(try AuthKitCommand.parseAsRoot(arguments) as? any CredentialAdapterCommand).flags
                #expect(fast.flags == slow, "--\(option.name)")
                #expect(!left.contains(option.name), "--\(option.name) is read by the fast path")
            } else {
                #expect(left.contains(option.name), "\(client)'s fast path ignores --\(option.name)")
            }
        }
    }
}
