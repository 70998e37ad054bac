import ArgumentParser
import AuthKit
import AuthKitCore
import JOSE

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#endif

/// `authkit setup kubectl --context C`.
struct SetupKubectlCommand: SetupClientCommand {
    static func status() -> SetupStatus {
        guard
            let users = try? Setup.run(
                "kubectl", ["config", "view", "-o", #"jsonpath={range .users[*]}{.name}{"\t"}{.user.exec.command}{"\n"}{end}"#]),
            users.status == 0
        else { return .unknown("kubectl not found, or no kubeconfig") }
        let names = users.output.split(separator: "\n").filter { $0.contains("authkit") }.compactMap {
            $0.split(separator: "\t").first.map(String.init)
        }
        return .of(names.sorted().map { "user " + $0 }, hint: "authkit setup kubectl --context NAME")
    }

    static let configuration = CommandConfiguration(
        commandName: "kubectl",
        abstract: "Make kubectl use the shared sign-in for one context's user.",
        usage: "authkit setup kubectl --context <name> [--print] [<options>]",
        discussion: """
            Sets the exec section of the user the context names, with `kubectl config` (so the \
            rest of the kubeconfig stays as kubectl keeps it): apiVersion \
            client.authentication.k8s.io/v1 with interactiveMode Never, or v1beta1 when the \
            kubectl found is older than 1.22. The plug-in is bound to the context's API server \
            (--server, provideClusterInfo: true): another cluster's context naming the same user \
            gets no token. Set up each context whose cluster should get one. The exec command \
            is authkit, or for an access token the lean client installed with it \
            (../lib/authkit/authkit-lean), which answers faster and hands the rest to authkit.

              authkit setup kubectl --context aks-prod \\
                  --scope 6dae42f8-4368-4678-94ff-3960e28e3630/.default
              authkit setup kubectl --context oidc-cluster --token-type id-token
            """
    )

    @Option(help: ArgumentHelp("The kubeconfig context whose user gets the plug-in.", valueName: "name"))
    var context: String

    @Option(name: .customLong("token-type"), help: "access-token (default) or id-token.")
    var tokenType: CredentialKubectlCommand.TokenType = .accessToken

    @OptionGroup var target: SetupTargetOptions

    @Flag(name: .customLong("print"), help: "Only show the exec section.")
    var printOnly = false

    func run() async throws {
        var arguments = ["credential", "kubectl"] + target.signIn.selector().words
        for scope in target.scopes { arguments += ["--scope", scope] }
        if tokenType == .idToken { arguments += ["--token-type", "id-token"] }
        // The lean client installed with authkit answers an access token's plug-in (kubectl
        // runs it once or twice per command); an id_token is checked against the provider's
        // keys, authkit's work, so that plug-in is authkit itself.
        let executable = tokenType == .idToken ? Setup.executablePath() : Setup.plugInProgram("kubectl")
        do throws(Setup.Failure) {
            let version = Self.kubectlMinorVersion()
            let apiVersion = (version ?? 22) >= 22 ? CredentialKubectlCommand.v1 : CredentialKubectlCommand.v1beta1
            // The same checks with --print as without: what is shown is what would be written.
            try Setup.checkValue(context, "--context")
            let user = try Setup.run("kubectl", ["config", "view", "-o", "jsonpath={.contexts[?(@.name==\"\(context)\")].context.user}"])
            let name = user.output.trimmingCharacters(in: " \n\r\t")
            guard user.status == 0, !name.isEmpty else {
                throw Setup.Failure(description: "kubectl knows no context ‘\(context)’ (kubectl config get-contexts lists them)")
            }
            try Setup.checkValue(name, "the user of context ‘\(context)’")
            // Bound to the context's API server where this kubectl can write provideClusterInfo
            // (`--exec-provide-cluster-info`; `kubectl config set` refuses that field), and to
            // the servers the user entry answers already: contexts that share a user keep theirs.
            var servers: [String] = []
            if Self.canProvideClusterInfo() {
                let url = try Self.server(ofContext: context)
                // Kept only while they still could be bound (an older authkit wrote them).
                var kept: [String] = []
                for server in try Self.boundServers(ofUser: name)
                where KubectlCredentialAdapter.normalized(server) != KubectlCredentialAdapter.normalized(url) {
                    if let problem = Self.unbindable(server) {
                        Terminal.printError(
                            "kubectl: user \(name) no longer answers for \(KubectlCredentialAdapter.shown(server)): \(problem)")
                    } else {
                        kept.append(server)
                    }
                }
                servers = kept + [url]
                for server in servers { arguments += ["--server", server] }
            }
            // kubectl reads each --exec-arg as CSV: a comma splits it, a quote breaks it, a
            // line ends it, an empty one goes.
            for argument in arguments {
                try Setup.checkValue(argument, "‘\(argument)’, an argument of the plug-in,")
                guard !argument.contains(",") else {
                    throw Setup.Failure(
                        description:
                            "kubectl config set-credentials splits --exec-arg at commas, so ‘\(argument)’ would reach the plug-in as several arguments; pass each scope with its own --scope"
                    )
                }
            }
            if printOnly {
                var text = "# user \(name) of context \(context)\nexec:\n  apiVersion: \(apiVersion)\n  command: \(executable)\n  args:\n"
                for argument in arguments { text += "  - \(argument)\n" }
                if apiVersion == CredentialKubectlCommand.v1 { text += "  interactiveMode: Never\n" }
                if !servers.isEmpty { text += "  provideClusterInfo: true\n" }
                Terminal.printData(text)
                return
            }
            var set = ["config", "set-credentials", name, "--exec-api-version=\(apiVersion)", "--exec-command=\(executable)"]
            set += arguments.map { "--exec-arg=\($0)" }
            if !servers.isEmpty { set.append("--exec-provide-cluster-info=true") }
            // v1 requires interactiveMode; newer kubectls set it with a flag, older ones with `config set`.
            if apiVersion == CredentialKubectlCommand.v1, try Setup.run("kubectl", set + ["--exec-interactive-mode=Never"]).status == 0 {
                // done
            } else {
                guard try Setup.run("kubectl", set).status == 0 else {
                    throw Setup.Failure(description: "kubectl config set-credentials failed")
                }
                if apiVersion == CredentialKubectlCommand.v1 {
                    guard try Setup.run("kubectl", ["config", "set", "users.\(name).exec.interactiveMode", "Never"]).status == 0 else {
                        throw Setup.Failure(description: "kubectl config set … interactiveMode failed")
                    }
                }
            }
            // A static token beside the exec section would be sent instead of the shared
            // sign-in's (client-go prefers it): it goes, and the user is told. (Asked without
            // --raw: kubectl shows a token as REDACTED, so its value never reaches us.)
            let statics = try Setup.run(
                "kubectl",
                [
                    "config", "view", "-o",
                    "jsonpath={.users[?(@.name==\"\(name)\")].user.token}{\"\\n\"}{.users[?(@.name==\"\(name)\")].user.tokenFile}",
                ])
            let present = statics.output.split(separator: "\n", omittingEmptySubsequences: false).map { $0.contains { !$0.isWhitespace } }
            for (field, isSet) in zip(["token", "tokenFile"], present + [false, false]) where statics.status == 0 && isSet {
                guard try Setup.run("kubectl", ["config", "unset", "users.\(name).\(field)"]).status == 0 else {
                    throw Setup.Failure(
                        description:
                            "user \(name) keeps a static \(field), which kubectl would send instead; remove it: kubectl config unset users.\(name).\(field)"
                    )
                }
                Terminal.printError("kubectl: removed the static \(field) of user \(name) (the exec plug-in replaces it)")
            }
            Terminal.printError(
                "kubectl: user \(name) of context \(context) runs \(executable) \(arguments.joined(separator: " ")) (\(apiVersion))")
            if servers.isEmpty {
                Terminal.printError(
                    "kubectl: this kubectl cannot write provideClusterInfo, so the plug-in answers every context naming user \(name); a newer kubectl binds it to the context's server"
                )
            }
        } catch {
            Terminal.printError("authkit: \(error)")
            throw ExitStatus.usage
        }
    }

    /// The API server of the context's cluster, as the kubeconfig writes it.
    static func server(ofContext context: String) throws(Setup.Failure) -> String {
        let cluster = try Setup.run("kubectl", ["config", "view", "-o", "jsonpath={.contexts[?(@.name==\"\(context)\")].context.cluster}"])
        let clusterName = cluster.output.trimmingCharacters(in: " \n\r\t")
        guard cluster.status == 0, !clusterName.isEmpty else { throw Setup.Failure(description: "context ‘\(context)’ names no cluster") }
        try Setup.checkValue(clusterName, "the cluster name of context ‘\(context)’")
        let server = try Setup.run(
            "kubectl", ["config", "view", "-o", "jsonpath={.clusters[?(@.name==\"\(clusterName)\")].cluster.server}"])
        let url = server.output.trimmingCharacters(in: " \n\r\t")
        guard server.status == 0, !url.isEmpty else {
            throw Setup.Failure(description: "cluster ‘\(clusterName)’ of context ‘\(context)’ has no server")
        }
        try Setup.checkValue(url, "the server of cluster ‘\(clusterName)’")
        if let problem = unbindable(url) {
            throw Setup.Failure(
                description: "cluster ‘\(clusterName)’ of context ‘\(context)’ is at \(KubectlCredentialAdapter.shown(url)): \(problem)")
        }
        return url
    }

    /// Why the plug-in cannot be bound to a server URL, or nil. What client-go sends back must
    /// be this text (it re-escapes a path and drops a query or fragment), without user info
    /// (the plug-in's arguments are on its command line), and over https (http on loopback).
    static func unbindable(_ url: String) -> String? {
        let authority = url.firstRange(of: "://").map { url[$0.upperBound...].prefix { $0 != "/" } } ?? Substring(url)
        guard !authority.contains("@"), !url.contains("?"), !url.contains("#"), !url.contains("%"),
            !url.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value >= 0x7F || $0 == "," || $0 == "\"" })
        else {
            return
                "the plug-in cannot be bound to a URL with user info, a query, a fragment, an escape, a comma, a quote or a character beyond ASCII; write it as scheme://host:port/path"
        }
        do throws(CredentialPlugin.Failure) { try KubectlCredentialAdapter.checkTransport(url) } catch {
            return "a token goes only over https (http only on loopback)"
        }
        return nil
    }

    /// The servers user `name`'s plug-in answers for already (its `--server` arguments), when
    /// its exec section runs `credential kubectl`.
    static func boundServers(ofUser name: String) throws(Setup.Failure) -> [String] {
        let result = try Setup.run(
            "kubectl", ["config", "view", "-o", "jsonpath={range .users[?(@.name==\"\(name)\")].user.exec.args[*]}{@}{\"\\n\"}{end}"])
        // Unread, the servers bound before would be dropped, and their contexts get no token.
        guard result.status == 0 else {
            throw Setup.Failure(description: "kubectl config view could not show user \(name)'s plug-in; nothing was changed")
        }
        let arguments = result.output.split(separator: "\n").map(String.init)
        guard arguments.starts(with: ["credential", "kubectl"]) else { return [] }
        var servers: [String] = []
        for (index, argument) in arguments.enumerated() {
            if argument == "--server", index + 1 < arguments.count { servers.append(arguments[index + 1]) }
            if argument.hasPrefix("--server=") { servers.append(String(argument.dropFirst("--server=".count))) }
        }
        return servers
    }

    /// True when this kubectl's `config set-credentials` can write provideClusterInfo.
    static func canProvideClusterInfo() -> Bool {
        guard let help = try? Setup.run("kubectl", ["config", "set-credentials", "--help"]), help.status == 0 else { return false }
        return help.output.contains("--exec-provide-cluster-info")
    }

    /// kubectl's client minor version, or nil when it cannot be told.
    static func kubectlMinorVersion() -> Int? {
        guard let result = try? Setup.run("kubectl", ["version", "--client", "-o", "json"]), result.status == 0,
            let value = try? JSONValue(parsing: result.output)
        else { return nil }
        let minor = value["clientVersion"]?["minor"]?.stringValue ?? ""
        return Int(minor.filter(\.isNumber))
    }
}
