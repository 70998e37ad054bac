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

/// `authkit setup docker --registry R`.
struct SetupDockerCommand: SetupClientCommand {
    static func status() -> SetupStatus {
        let environment = ProcessInfo.processInfo.environment
        let directory = environment["DOCKER_CONFIG"].flatMap { $0.isEmpty ? nil : $0 } ?? (environment["HOME"] ?? "") + "/.docker"
        return CredHelpersFile(client: "docker", path: directory + "/config.json").status(hint: "authkit setup docker --registry HOST")
    }

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

    @OptionGroup var options: CredHelpersOptions

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        let directory = environment["DOCKER_CONFIG"].flatMap { $0.isEmpty ? nil : $0 } ?? (environment["HOME"] ?? "") + "/.docker"
        try CredHelpersFile(client: "docker", path: directory + "/config.json").setUp(options)
    }
}

/// What `setup docker` and `setup podman` take: the registry, the sign-in it gets, where the
/// helper link goes.
struct CredHelpersOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The registry, as the client names it (registry.example.com, localhost:5000).", valueName: "host"))
    var registry: String

    @OptionGroup var target: SetupTargetOptions

    @OptionGroup var user: SetupUsernameOption

    @Option(
        name: .customLong("link-dir"),
        help: ArgumentHelp("Where to link docker-credential-authkit (default: authkit's own directory).", valueName: "dir"))
    var linkDirectory: String?

    @Flag(name: .customLong("print"), help: "Only show what would be written.")
    var printOnly = false

    func validate() throws {
        let host = CredentialMap.registryHost(registry)
        guard !host.isEmpty, !registry.contains(" ") else {
            throw ValidationError("--registry must name a registry host, e.g. registry.example.com")
        }
        // The client looks its helper up under the host exactly: a key with a scheme, a path
        // or capitals would never be asked for — but Docker Hub's, which docker looks up under
        // its index URL.
        guard registry == host || registry == "https://index.docker.io/v1/" else {
            throw ValidationError("--registry takes the registry's host as the client names it: --registry \(host)")
        }
    }
}

/// A JSON file with a `credHelpers` object — docker's config.json, containers-auth.json — set
/// up to send one registry to `docker-credential-authkit`: every other key kept, written
/// atomically; a file that is not valid JSON is refused and left as it is.
struct CredHelpersFile {
    /// Who reads the file (for messages): docker, podman.
    var client: String
    var path: String

    var directory: String { Setup.directory(of: path) }

    /// "set up for R1, R2 (path)", or "not set up (…)".
    func status(hint: String) -> SetupStatus {
        guard let bytes = try? FileAccess.read(path, limit: 4 << 20), let value = try? JSONValue(parsing: bytes),
            let helpers = value["credHelpers"]?.objectValue
        else { return .notSetUp(hint: hint) }
        return .of(helpers.filter { $0.value == .string("authkit") }.map(\.key).sorted(), place: path, hint: hint)
    }

    func setUp(_ options: CredHelpersOptions) throws {
        let registry = options.registry, entries = options.user.entries(options.target), linkDirectory = options.linkDirectory,
            printOnly = options.printOnly
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
            let plan = try Setup.planSection(kind: .registry, name: registry, option: "--registry", entries: entries)
            if printOnly {
                let linking =
                    Setup.leadsTo(link, executable)
                    ? "# \(link) already leads to this authkit: kept\n"
                    : "ln -s \(Setup.shellQuoted(Setup.plugInProgram("docker", executable: executable))) \(Setup.shellQuoted(link))\n"
                Terminal.printData("# \(path)\n\(text)\(linking)\(plan.printed)")
                return
            }
            let section = try plan.apply { () throws(Setup.Failure) in
                try write(registry: registry, text: text, changed: changed, executable: executable, link: link)
            }
            Terminal.printError(section)
        } catch {
            Terminal.printError("authkit: \(error)")
            throw ExitStatus.usage
        }
    }

    /// The helper link, then the file: the client is never pointed at a helper that is not there.
    private func write(registry: String, text: String, changed: Bool, executable: String, link: String) throws(Setup.Failure) {
        // A link that already leads to this authkit stays as it is (the package's own links are
        // relative, and dpkg owns them).
        if Setup.leadsTo(link, executable) {
            Terminal.printError("\(client): \(link) already leads to this authkit (kept)")
        } else {
            // (The lean client installed with authkit, where there is one: the same answers, faster.)
            let program = Setup.plugInProgram("docker", executable: executable)
            unlink(link)
            guard symlink(program, link) == 0 else {
                throw Setup.Failure(
                    description: "cannot link \(link): \(String(cString: strerror(errno))); run: ln -s \(program) \(link)")
            }
            Terminal.printError("\(client): \(link) -> \(program)")
        }
        if changed {
            try Setup.makeFolder(directory, mode: 0o700)
            do { try Setup.writeAtomically(Array(text.utf8), to: path, mode: 0o600) } catch {
                throw Setup.Failure(description: "cannot write \(path): \(error)")
            }
            Terminal.printError("\(client): \(path): credHelpers[\"\(registry)\"] = \"authkit\"")
        } else {
            Terminal.printError("\(client): \(path): credHelpers[\"\(registry)\"] already set")
        }
    }
}
