import ArgumentParser
import AuthKit
import AuthKitCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `authkit config map URL|REGISTRY`: which sign-in a client's request would get, and from
/// which entry — the question a person asks when git prompts or docker pulls anonymously.
struct ConfigMapCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "map",
        abstract: "Show which sign-in a git URL or a registry gets, and from which entry.",
        usage: "authkit config map <url-or-registry>",
        discussion: """
            A URL with a scheme (https://host[:port]/path) is looked up as git looks up \
            credential.<url> entries, in the [credential "URL"] sections; anything else as a \
            registry, in the [registry "HOST"] sections. Exit 1 when nothing maps it: that \
            client gets nothing from authkit. Reads only the config file.

              authkit config map https://dev.azure.com/org/project/_git/repo
              authkit config map registry.example.com
            """)

    @Argument(help: ArgumentHelp("A git URL, or a registry as docker names it.", valueName: "url-or-registry"))
    var target: String

    func run() throws {
        let file: ConfigFile
        do { file = try ConfigFile.load(environment: ProcessInfo.processInfo.environment) } catch {
            Terminal.printError(Voice.error(error.description))
            throw ExitStatus.usage
        }
        let kind: ConfigFile.MappingKind
        let mapped: CredentialTarget?
        if let separator = target.firstRange(of: "://"), !target[..<separator.lowerBound].contains("/") {
            kind = .credential
            let scheme = String(target[..<separator.lowerBound]).lowercased()
            let rest = target[separator.upperBound...]
            let slash = rest.firstIndex(of: "/") ?? rest.endIndex
            var host = rest[..<slash]
            if let at = host.lastIndex(of: "@") { host = host[host.index(after: at)...] }
            let user = rest[..<slash].lastIndex(of: "@").map { String(rest[..<$0].split(separator: ":").first ?? "") }
            // What the plug-in refuses whatever the mappings say.
            guard CredentialMap.carriesTokens(scheme: scheme, host: String(host)) else {
                Terminal.printError(
                    Voice.error(
                        "git gets no token from authkit for \(ProviderText.displayable(target)): it would cross the network unencrypted",
                        hint: "use https (plain http only to a loopback address)"))
                throw ExitStatus.loginNeeded
            }
            // As git does before it asks a helper: the path percent-decoded.
            let path = CredentialMap.percentDecoded(rest[slash...].drop { $0 == "/" }) ?? String(rest[slash...].drop { $0 == "/" })
            do throws(ConfigProblem) {
                mapped = try CredentialMap.gitTarget(
                    protocol: scheme, host: String(host), path: path.isEmpty ? nil : path, username: user, in: file)
            } catch {
                Terminal.printError(Voice.error(error.description))
                throw ExitStatus.usage
            }
        } else {
            kind = .registry
            mapped = CredentialMap.registryTarget(server: target, in: file)
        }
        guard let mapped else {
            let client = kind == .credential ? "git gets" : "docker gets"
            Terminal.printError(
                Voice.error(
                    "nothing in \(file.path) maps \(target): \(client) nothing from authkit there",
                    hint: kind == .credential
                        ? "add it with `authkit setup git --host URL`" : "add it with `authkit setup docker --registry HOST`"))
            throw ExitStatus.loginNeeded
        }
        let line = file.mappings(kind)[mapped.entry]?.line ?? 0
        var text = "\(target)\n  entry     [\(kind.rawValue) \"\(mapped.entry)\"] (\(file.path):\(line))\n"
        if let profile = mapped.profile { text += "  profile   \(profile)\n" }
        if let group = mapped.group { text += "  group     \(group)\n" }
        if let account = mapped.account { text += "  account   \(account)\n" }
        if let scopes = mapped.scopes { text += "  scopes    \(scopes.joined(separator: " "))\n" }
        text += "  username  \(mapped.username)\n"
        Terminal.printData(text)
    }
}
