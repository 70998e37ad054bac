import ArgumentParser
import AuthKit
import SecretStore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `authkit setup aws --profile P --role-arn ARN`: a `credential_process` profile.
struct SetupAWSCommand: SetupClientCommand {
    static func status() -> String {
        let path = configPath(environment: ProcessInfo.processInfo.environment)
        guard let bytes = try? FileAccess.read(path, limit: 4 << 20), let text = String(validating: bytes, as: UTF8.self) else {
            return "not set up (authkit setup aws --profile NAME --role-arn ARN)"
        }
        var profiles: [String] = []
        var current: String?
        for line in text.split(separator: "\n") {
            let trimmed = String(line).trimmingCharacters(in: " \t\r")
            if trimmed.hasPrefix("[") && trimmed.hasSuffix("]") {
                let name = String(trimmed.dropFirst().dropLast()).trimmingCharacters(in: " ")
                current = name.hasPrefix("profile ") ? String(name.dropFirst(8)).trimmingCharacters(in: " ") : name
            } else if let name = current, trimmed.hasPrefix("credential_process"), trimmed.contains(" credential aws ") {
                profiles.append(name)
            }
        }
        return profiles.isEmpty ? "not set up (authkit setup aws --profile NAME --role-arn ARN)" : "set up for " + profiles.joined(separator: ", ") + " (\(path))"
    }

    static let configuration = CommandConfiguration(
        commandName: "aws",
        abstract: "Give an AWS CLI/SDK profile credentials for a role from the shared sign-in.",
        usage: "authkit setup aws --profile <name> --role-arn <arn> [--group <name>] [--duration <seconds>] [--print]",
        discussion: """
            Appends [profile NAME] with credential_process = authkit credential aws … to the \
            AWS config file ($AWS_CONFIG_FILE, else ~/.aws/config); nothing else is touched, and \
            a profile that exists already is left alone (edit it by hand). The role's trust \
            policy must accept the provider's id_tokens (an IAM OIDC identity provider for the \
            issuer, with the client id as audience).
            """
    )

    @Option(help: ArgumentHelp("The AWS profile to write (`default` for the default one).", valueName: "name"))
    var profile: String

    @Option(name: .customLong("role-arn"), help: ArgumentHelp("The IAM role to assume.", valueName: "arn"))
    var roleARN: String

    @Option(help: ArgumentHelp("The group whose sign-in the profile uses.", valueName: "name"))
    var group: String?

    @Option(help: ArgumentHelp("Where the sign-in lives (secret-service, kernel-keyring, plain-file).", valueName: "store"))
    var storage: StorageChoice?

    @Option(help: ArgumentHelp("How long the credentials last (900–43200 s).", valueName: "seconds"))
    var duration: Int?

    @Flag(name: .customLong("print"), help: "Only show what would be written.")
    var printOnly = false

    func validate() throws {
        guard !profile.isEmpty, profile.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-_.".contains($0)) }) else {
            throw ValidationError("--profile must be a profile name: letters, digits, -, _ and .")
        }
        guard AWSCredentialAdapter.isRoleARN(roleARN) else { throw ValidationError("--role-arn must be an IAM role ARN, e.g. arn:aws:iam::123456789012:role/dev") }
        if let duration, !(900...43_200).contains(duration) { throw ValidationError("--duration must be between 900 and 43200 seconds") }
        if let group {
            do { _ = try SecretGroup(group) } catch { throw ValidationError("--group: \(error)") }
        }
    }

    func run() async throws {
        let path = Self.configPath(environment: ProcessInfo.processInfo.environment)
        var words = [Setup.executablePath(), "credential", "aws", "--role-arn", roleARN]
        if let group { words += ["--group", group] }
        if let storage { words += ["--storage", storage.rawValue] }
        if let duration { words += ["--duration", String(duration)] }
        let header = profile == "default" ? "[default]" : "[profile \(profile)]"
        let section = "\(header)\ncredential_process = \(words.map(Setup.shellQuoted).joined(separator: " "))\n"
        do throws(Setup.Failure) {
            var text = ""
            if FileManager.default.fileExists(atPath: path) {
                do { text = String(decoding: try FileAccess.read(path, limit: 4 << 20), as: UTF8.self) } catch {
                    throw Setup.Failure(description: "\(path): \(error)")
                }
            }
            let present = text.split(separator: "\n").contains { String($0).trimmingCharacters(in: " \t\r") == header }
            if present && !text.contains(section) {
                throw Setup.Failure(description: "\(path) has \(header) already; add `\(section.split(separator: "\n")[1])` to it by hand, or remove it first")
            }
            if printOnly {
                Terminal.printData("# \(path)\n\(section)")
                return
            }
            guard !present else {
                Terminal.printError("aws: \(path): \(header) already set")
                return
            }
            let separator = text.isEmpty || text.hasSuffix("\n\n") ? "" : (text.hasSuffix("\n") ? "\n" : "\n\n")
            try? FileManager.default.createDirectory(atPath: Setup.directory(of: path), withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            try Setup.writeAtomically(Array((text + separator + section).utf8), to: path, mode: 0o600)
            Terminal.printError("aws: \(path): added \(header)")
        } catch {
            Terminal.printError("authkit: \(error)")
            throw ExitStatus.usage
        }
    }

    /// `$AWS_CONFIG_FILE`, else `~/.aws/config`.
    static func configPath(environment: [String: String]) -> String {
        if let file = environment["AWS_CONFIG_FILE"], file.hasPrefix("/") { return file }
        return (environment["HOME"] ?? "") + "/.aws/config"
    }
}
