import ArgumentParser
import AuthKit
import ChildProcess
import JOSE

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#endif

/// `authkit setup git|docker|kubectl`: writes each client's configuration for the plug-ins.
struct SetupCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "setup",
        abstract: "Configure git, docker or kubectl to use the shared sign-in.",
        discussion: """
            Each subcommand writes only what it needs, keeps everything else, does nothing \
            when run twice, and with --print shows what it would write instead.
            """,
        subcommands: [SetupGitCommand.self, SetupDockerCommand.self, SetupKubectlCommand.self]
    )
}

/// Shared pieces of the setup commands.
enum Setup {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// The running authkit's absolute path (what the clients' configurations run).
    static func executablePath() -> String {
        var buffer = [CChar](repeating: 0, count: 4096)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        if count > 0 { return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self) }
        return CommandLine.arguments.first ?? "authkit"
    }

    /// `word` quoted for the shell git runs `!`-helpers with.
    static func shellQuoted(_ word: String) -> String {
        word.allSatisfy({ $0.isLetter || $0.isNumber || "/._-+:=@".contains($0) })
            ? word : "'" + word.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "'\\''") + "'"
    }

    /// Runs a program (found on PATH) with standard error discarded and no input, returning
    /// its status and standard output.
    static func run(_ program: String, _ arguments: [String]) throws(Failure) -> (status: Int32, output: String) {
        do throws(ChildProcess.SpawnError) {
            let (termination, bytes) = try ChildProcess.capture([program] + arguments)
            return (termination.status, String(decoding: bytes, as: UTF8.self))
        } catch {
            throw Failure(description: error.description)
        }
    }

    /// The directory part of a path.
    static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// The `[kind "name"]` section with `entries`, added to authkit's config file unless it is
    /// there already; a different section of that name is left alone and reported.
    static func addSection(kind: String, name: String, entries: [(String, String)], print: Bool) throws(Failure) -> String {
        let environment = ProcessInfo.processInfo.environment
        let path = ConfigFile.location(environment: environment)
        var text = "[\(kind) \"\(name)\"]\n"
        for (key, value) in entries { text += "\(key) = \(value)\n" }
        if print { return "# \(path)\n\(text)" }
        var existing: ConfigFile.Section?
        if FileManager.default.fileExists(atPath: path) {
            do {
                let file = try ConfigFile.load(environment: environment)
                existing = kind == "credential" ? file.credentials[name] : file.registries[name]
            } catch { throw Failure(description: "\(error)") }
        }
        if let existing {
            let wanted = Dictionary(entries, uniquingKeysWith: { $1 })
            guard existing.entries.mapValues(\.value) == wanted else {
                throw Failure(description: "\(path):\(existing.line): [\(kind) \"\(name)\"] exists with other settings; edit it there")
            }
            return "\(path): [\(kind) \"\(name)\"] already set"
        }
        let directory = Setup.directory(of: path)
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        var current = ((try? FileAccess.read(path)).map { String(decoding: $0, as: UTF8.self) }) ?? ""
        if !current.isEmpty && !current.hasSuffix("\n") { current += "\n" }
        if !current.isEmpty { current += "\n" }
        do {
            try writeAtomically(Array((current + text).utf8), to: path, mode: 0o600)
        } catch {
            throw Failure(description: "cannot write \(path): \(error)")
        }
        return "\(path): added [\(kind) \"\(name)\"]"
    }

    /// Replaces `path` whole: a temporary file beside it, then rename (readers never see half
    /// a file). An existing file's mode is kept.
    static func writeAtomically(_ bytes: [UInt8], to path: String, mode: mode_t) throws {
        var info = stat()
        let keptMode = stat(path, &info) == 0 ? info.st_mode & 0o777 : mode
        let temporary = path + ".authkit-\(getpid()).tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, keptMode)
        guard fd >= 0 else { throw Failure(description: String(cString: strerror(errno))) }
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EINTR { continue }
                let reason = String(cString: strerror(errno))
                close(fd)
                unlink(temporary)
                throw Failure(description: reason)
            }
            offset += written
        }
        fsync(fd)
        close(fd)
        guard rename(temporary, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw Failure(description: reason)
        }
    }

}

/// Which sign-in a set-up client gets: the options `setup git|docker|kubectl` share.
struct SetupTargetOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The profile whose sign-in the client gets.", valueName: "name"))
    var profile: String?

    @Option(help: ArgumentHelp("The group whose sign-in the client gets.", valueName: "name"))
    var group: String?

    @Option(help: ArgumentHelp("The user name sent with the token (default oauth2; git and docker).", valueName: "name"))
    var username: String?

    @Option(name: .customLong("scope"), help: ArgumentHelp("A scope the token must carry (repeatable).", valueName: "scope"))
    var scopes: [String] = []

    /// The mapping keys these options set, for authkit's config file.
    var entries: [(String, String)] {
        var entries: [(String, String)] = []
        if let profile { entries.append(("profile", profile)) }
        if let group { entries.append(("group", group)) }
        if !scopes.isEmpty { entries.append(("scopes", scopes.joined(separator: " "))) }
        if let username { entries.append(("username", username)) }
        return entries
    }
}

/// `authkit setup git --host URL`.
struct SetupGitCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "git",
        abstract: "Make git use the shared sign-in for one host.",
        usage: "authkit setup git --host <url> [--print] [<options>]",
        discussion: """
            Writes, with `git config --global`, an empty credential.URL.helper (so no other \
            helper answers for this host) and then authkit's, and maps the host in authkit's \
            config file:

              authkit setup git --host https://dev.azure.com --profile microsoft \\
                  --scope 499b84ac-1321-427f-aa17-267ca6975798/.default
            """
    )

    @Option(help: ArgumentHelp("The git host, as https://host[:port][/path].", valueName: "url"))
    var host: String

    @OptionGroup var target: SetupTargetOptions

    @Flag(name: .customLong("print"), help: "Only show what would be written.")
    var printOnly = false

    func validate() throws {
        guard let url = URL(string: host), let scheme = url.scheme, ["https", "http"].contains(scheme.lowercased()), url.host != nil,
            !host.contains(" ")
        else { throw ValidationError("--host must be an https://host URL, e.g. https://dev.azure.com") }
    }

    func run() async throws {
        let key = "credential.\(host).helper"
        let helper = "!\(Setup.shellQuoted(Setup.executablePath())) credential git"
        do throws(Setup.Failure) {
            let section = try Setup.addSection(
                kind: "credential", name: host, entries: target.entries,
                print: printOnly)
            if printOnly {
                Terminal.printData("git config --global --replace-all \(Setup.shellQuoted(key)) ''\ngit config --global --add \(Setup.shellQuoted(key)) \(Setup.shellQuoted(helper))\n\(section)")
                return
            }
            let current = try Setup.run("git", ["config", "--global", "--get-all", key])
            let lines = current.output.split(separator: "\n", omittingEmptySubsequences: false).map(String.init).dropLast(current.output.hasSuffix("\n") ? 1 : 0)
            if Array(lines) == ["", helper] {
                Terminal.printError("git: \(key) already set")
            } else {
                _ = try Setup.run("git", ["config", "--global", "--unset-all", key])
                let reset = try Setup.run("git", ["config", "--global", "--add", key, ""])
                let add = try Setup.run("git", ["config", "--global", "--add", key, helper])
                guard reset.status == 0, add.status == 0 else { throw Setup.Failure(description: "git config --global failed") }
                Terminal.printError("git: \(key) = \(helper) (after an empty reset)")
            }
            Terminal.printError(section)
        } catch {
            Terminal.printError("authkit: \(error)")
            throw ExitStatus.usage
        }
    }
}

/// `authkit setup docker --registry R`.
struct SetupDockerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "docker",
        abstract: "Make docker use the shared sign-in for one registry.",
        usage: "authkit setup docker --registry <host> [--print] [<options>]",
        discussion: """
            Adds credHelpers["REGISTRY"] = "authkit" to docker's config.json ($DOCKER_CONFIG, \
            else ~/.docker) — never credsStore, every other key kept, written atomically; a \
            config.json that is not valid JSON is refused and left as it is. Links \
            docker-credential-authkit to authkit (docker finds helpers on PATH) and maps the \
            registry in authkit's config file.
            """
    )

    @Option(help: ArgumentHelp("The registry, as docker names it (registry.example.com, localhost:5000).", valueName: "host"))
    var registry: String

    @OptionGroup var target: SetupTargetOptions

    @Option(name: .customLong("link-dir"), help: ArgumentHelp("Where to link docker-credential-authkit (default: authkit's own directory).", valueName: "dir"))
    var linkDirectory: String?

    @Flag(name: .customLong("print"), help: "Only show what would be written.")
    var printOnly = false

    func validate() throws {
        guard !CredentialMap.registryHost(registry).isEmpty, !registry.contains(" ") else {
            throw ValidationError("--registry must name a registry host, e.g. registry.example.com")
        }
    }

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        let directory = environment["DOCKER_CONFIG"].flatMap { $0.isEmpty ? nil : $0 } ?? (environment["HOME"] ?? "") + "/.docker"
        let path = directory + "/config.json"
        let executable = Setup.executablePath()
        let link = (linkDirectory ?? Setup.directory(of: executable)) + "/docker-credential-authkit"
        do throws(Setup.Failure) {
            var object = JSONObject()
            if FileManager.default.fileExists(atPath: path) {
                let bytes: [UInt8]
                do { bytes = try FileAccess.read(path, limit: 4 << 20) } catch { throw Setup.Failure(description: "\(path): \(error)") }
                do {
                    guard case .object(let existing) = try JSONValue(parsing: bytes) else {
                        throw Setup.Failure(description: "\(path) is not a JSON object; it was left as it is")
                    }
                    object = existing
                } catch let error as JSONError {
                    throw Setup.Failure(description: "\(path) is not valid JSON (\(error.reason)); it was left as it is")
                } catch let error as Setup.Failure {
                    throw error
                } catch {
                    throw Setup.Failure(description: "\(path): \(error)")
                }
            }
            var helpers = object["credHelpers"]?.objectValue ?? JSONObject()
            if object["credHelpers"] != nil && object["credHelpers"]?.objectValue == nil {
                throw Setup.Failure(description: "\(path): credHelpers is not an object; it was left as it is")
            }
            let changed = helpers[registry] != .string("authkit")
            helpers[registry] = "authkit"
            object["credHelpers"] = .object(helpers)
            let text = JSONValue.object(object).serialized(options: [.prettyPrinted]) + "\n"
            let section = try Setup.addSection(
                kind: "registry", name: registry, entries: target.entries,
                print: printOnly)
            if printOnly {
                Terminal.printData("# \(path)\n\(text)ln -s \(Setup.shellQuoted(executable)) \(Setup.shellQuoted(link))\n\(section)")
                return
            }
            if changed {
                try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
                do { try Setup.writeAtomically(Array(text.utf8), to: path, mode: 0o600) } catch {
                    throw Setup.Failure(description: "cannot write \(path): \(error)")
                }
                Terminal.printError("docker: \(path): credHelpers[\"\(registry)\"] = \"authkit\"")
            } else {
                Terminal.printError("docker: \(path): credHelpers[\"\(registry)\"] already set")
            }
            if (try? FileManager.default.destinationOfSymbolicLink(atPath: link)) != executable {
                unlink(link)
                guard symlink(executable, link) == 0 else {
                    throw Setup.Failure(description: "cannot link \(link): \(String(cString: strerror(errno))); run: ln -s \(executable) \(link)")
                }
            }
            Terminal.printError("docker: \(link) -> \(executable)")
            Terminal.printError(section)
        } catch {
            Terminal.printError("authkit: \(error)")
            throw ExitStatus.usage
        }
    }
}

/// `authkit setup kubectl --context C`.
struct SetupKubectlCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "kubectl",
        abstract: "Make kubectl use the shared sign-in for one context's user.",
        usage: "authkit setup kubectl --context <name> [--print] [<options>]",
        discussion: """
            Sets the exec section of the user the context names, with `kubectl config` (so the \
            rest of the kubeconfig stays as kubectl keeps it): apiVersion \
            client.authentication.k8s.io/v1 with interactiveMode Never, or v1beta1 when the \
            kubectl found is older than 1.22.

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
        var arguments = ["credential", "kubectl"]
        if let profile = target.profile { arguments += ["--profile", profile] }
        if let group = target.group { arguments += ["--group", group] }
        for scope in target.scopes { arguments += ["--scope", scope] }
        if tokenType == .idToken { arguments += ["--token-type", "id-token"] }
        let executable = Setup.executablePath()
        do throws(Setup.Failure) {
            let version = Self.kubectlMinorVersion()
            let apiVersion = (version ?? 22) >= 22 ? CredentialKubectlCommand.v1 : CredentialKubectlCommand.v1beta1
            if printOnly {
                var text = "exec:\n  apiVersion: \(apiVersion)\n  command: \(executable)\n  args:\n"
                for argument in arguments { text += "  - \(argument)\n" }
                if apiVersion == CredentialKubectlCommand.v1 { text += "  interactiveMode: Never\n" }
                Terminal.printData(text)
                return
            }
            let user = try Setup.run("kubectl", ["config", "view", "-o", "jsonpath={.contexts[?(@.name==\"\(context)\")].context.user}"])
            let name = user.output.trimmingCharacters(in: " \n\r\t")
            guard user.status == 0, !name.isEmpty else {
                throw Setup.Failure(description: "kubectl knows no context ‘\(context)’ (kubectl config get-contexts lists them)")
            }
            var set = ["config", "set-credentials", name, "--exec-api-version=\(apiVersion)", "--exec-command=\(executable)"]
            set += arguments.map { "--exec-arg=\($0)" }
            // v1 requires interactiveMode; newer kubectls set it with a flag, older ones with `config set`.
            if apiVersion == CredentialKubectlCommand.v1, try Setup.run("kubectl", set + ["--exec-interactive-mode=Never"]).status == 0 {
                // done
            } else {
                guard try Setup.run("kubectl", set).status == 0 else { throw Setup.Failure(description: "kubectl config set-credentials failed") }
                if apiVersion == CredentialKubectlCommand.v1 {
                    guard try Setup.run("kubectl", ["config", "set", "users.\(name).exec.interactiveMode", "Never"]).status == 0 else {
                        throw Setup.Failure(description: "kubectl config set … interactiveMode failed")
                    }
                }
            }
            Terminal.printError("kubectl: user \(name) of context \(context) runs \(executable) \(arguments.joined(separator: " ")) (\(apiVersion))")
        } catch {
            Terminal.printError("authkit: \(error)")
            throw ExitStatus.usage
        }
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
