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

    /// A `[kind "name"]` section for authkit's config file, checked and ready to write: every
    /// value validated, and the whole new file parsed back, so that nothing is written unless
    /// the file stays one every command can read, holding exactly this section.
    struct SectionPlan {
        var path: String
        var text: String
        /// The file's bytes before (nil: it did not exist), for ``undo()``.
        var previous: [UInt8]?
        /// The new file's bytes; nil when the section is there already.
        var replacement: [UInt8]?

        /// What `--print` shows.
        var printed: String { "# \(path)\n\(text)" }

        /// Writes the new file (nothing when the section was there) and says what happened.
        func write() throws(Failure) -> String {
            guard let replacement else { return "\(path): \(text.prefix { $0 != "\n" }) already set" }
            try? FileManager.default.createDirectory(
                atPath: Setup.directory(of: path), withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            do {
                try writeAtomically(replacement, to: path, mode: 0o600)
            } catch {
                throw Failure(description: "cannot write \(path): \(error)")
            }
            return "\(path): added \(text.prefix { $0 != "\n" })"
        }

        /// Puts the file back as it was (a later step failed).
        func undo() {
            guard replacement != nil else { return }
            if let previous { try? writeAtomically(previous, to: path, mode: 0o600) } else { unlink(path) }
        }
    }

    /// A value authkit's config file can hold as it is: no control character (a line break
    /// would start a new line, and a new section), no surrounding space, no `"`.
    static func checkValue(_ value: String, _ what: String) throws(Failure) {
        guard let first = value.unicodeScalars.first, let last = value.unicodeScalars.last, first != " ", last != " ",
            !value.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F || $0 == "\"" || $0 == "\u{2028}" || $0 == "\u{2029}" })
        else { throw Failure(description: "\(what) must be one line without control characters, quotes or surrounding spaces") }
    }

    /// Plans the `[kind "name"]` section with `entries`: an error, nothing written, when a value
    /// cannot be written as it is, when the file cannot be read, or when a different section of
    /// that name is there.
    static func planSection(kind: String, name: String, entries: [(String, String)]) throws(Failure) -> SectionPlan {
        try checkValue(name, kind == "credential" ? "--host" : "--registry")
        guard !name.contains(" "), !name.contains("]") || name.contains("[") else {
            throw Failure(description: "\(kind == "credential" ? "--host" : "--registry") must not contain spaces")
        }
        for (key, value) in entries { try checkValue(value, "--\(key == "scopes" ? "scope" : key)") }
        let environment = ProcessInfo.processInfo.environment
        let path = ConfigFile.location(environment: environment)
        var text = "[\(kind) \"\(name)\"]\n"
        for (key, value) in entries { text += "\(key) = \(value)\n" }
        var previous: [UInt8]?
        if FileManager.default.fileExists(atPath: path) {
            let file: ConfigFile
            do {
                file = try ConfigFile.load(environment: environment)
                previous = try FileAccess.read(path)
            } catch { throw Failure(description: "\(error)") }
            if let existing = kind == "credential" ? file.credentials[name] : file.registries[name] {
                let wanted = Dictionary(entries, uniquingKeysWith: { $1 })
                guard existing.entries.mapValues(\.value) == wanted else {
                    throw Failure(description: "\(path):\(existing.line): [\(kind) \"\(name)\"] exists with other settings; edit it there")
                }
                return SectionPlan(path: path, text: text, previous: previous, replacement: nil)
            }
        }
        var current = previous.map { String(decoding: $0, as: UTF8.self) } ?? ""
        if !current.isEmpty && !current.hasSuffix("\n") { current += "\n" }
        if !current.isEmpty { current += "\n" }
        let updated = current + text
        // Read back as every command will: the same file plus exactly this section.
        let parsed: ConfigFile
        do { parsed = try ConfigFile.parse(updated, path: path) } catch {
            throw Failure(description: "the mapping would not be readable (\(error)); nothing was written")
        }
        let section = kind == "credential" ? parsed.credentials[name] : parsed.registries[name]
        guard let section, section.entries.mapValues(\.value) == Dictionary(entries, uniquingKeysWith: { $1 }) else {
            throw Failure(description: "the mapping would not read back as written; nothing was written")
        }
        return SectionPlan(path: path, text: text, previous: previous, replacement: Array(updated.utf8))
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
            let plan = try Setup.planSection(kind: "credential", name: host, entries: target.entries)
            if printOnly {
                Terminal.printData("git config --global --replace-all \(Setup.shellQuoted(key)) ''\ngit config --global --add \(Setup.shellQuoted(key)) \(Setup.shellQuoted(helper))\n\(plan.printed)")
                return
            }
            let section = try plan.write()
            do throws(Setup.Failure) {
                try configureGit(key: key, helper: helper)
            } catch {
                plan.undo()
                throw error
            }
            Terminal.printError(section)
        } catch {
            Terminal.printError("authkit: \(error)")
            throw ExitStatus.usage
        }
    }

    /// git's helper list for the host: an empty reset, then authkit.
    private func configureGit(key: String, helper: String) throws(Setup.Failure) {
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
            let plan = try Setup.planSection(kind: "registry", name: registry, entries: target.entries)
            if printOnly {
                Terminal.printData("# \(path)\n\(text)ln -s \(Setup.shellQuoted(executable)) \(Setup.shellQuoted(link))\n\(plan.printed)")
                return
            }
            let section = try plan.write()
            do throws(Setup.Failure) {
                try configureDocker(path: path, directory: directory, text: text, changed: changed, executable: executable, link: link)
            } catch {
                plan.undo()
                throw error
            }
            Terminal.printError(section)
        } catch {
            Terminal.printError("authkit: \(error)")
            throw ExitStatus.usage
        }
    }

    /// docker's config.json and the helper link.
    private func configureDocker(path: String, directory: String, text: String, changed: Bool, executable: String, link: String)
        throws(Setup.Failure)
    {
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
            // A static token beside the exec section would be sent instead of the shared
            // sign-in's (client-go prefers it): it goes, and the user is told. (Asked without
            // --raw: kubectl shows a token as REDACTED, so its value never reaches us.)
            let statics = try Setup.run("kubectl", [
                "config", "view", "-o",
                "jsonpath={.users[?(@.name==\"\(name)\")].user.token}{\"\\n\"}{.users[?(@.name==\"\(name)\")].user.tokenFile}",
            ])
            let present = statics.output.split(separator: "\n", omittingEmptySubsequences: false).map { $0.contains { !$0.isWhitespace } }
            for (field, isSet) in zip(["token", "tokenFile"], present + [false, false]) where statics.status == 0 && isSet {
                guard try Setup.run("kubectl", ["config", "unset", "users.\(name).\(field)"]).status == 0 else {
                    throw Setup.Failure(description: "user \(name) keeps a static \(field), which kubectl would send instead; remove it: kubectl config unset users.\(name).\(field)")
                }
                Terminal.printError("kubectl: removed the static \(field) of user \(name) (the exec plug-in replaces it)")
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
