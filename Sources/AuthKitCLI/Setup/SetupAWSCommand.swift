import ArgumentParser
import AuthKit
import AuthKitCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `authkit setup aws --aws-profile P --role-arn ARN`: a `credential_process` profile.
struct SetupAWSCommand: SetupClientCommand {
    static func status() -> SetupStatus {
        let path = configPath(environment: ProcessInfo.processInfo.environment)
        let profiles = Setup.sections(
            of: path, name: { $0.hasPrefix("profile ") ? String($0.dropFirst(8)).trimmingCharacters(in: " ") : $0 }
        ) {
            $0.hasPrefix("credential_process") && $0.contains(" credential aws ")
        }
        return .of(profiles, place: path, hint: "authkit setup aws --aws-profile NAME --role-arn ARN")
    }

    static let configuration = CommandConfiguration(
        commandName: "aws",
        abstract: "Give an AWS CLI/SDK profile credentials for a role from the shared sign-in.",
        usage:
            "authkit setup aws --aws-profile <name> --role-arn <arn> [--profile <name>] [--group <name>] [--duration <seconds>] [--print]",
        discussion: """
            Appends [profile NAME] with credential_process = authkit credential aws … to the \
            AWS config file ($AWS_CONFIG_FILE, else ~/.aws/config); nothing else is touched, and \
            a profile that exists already is left alone (edit it by hand). The role's trust \
            policy must accept the provider's id_tokens (an IAM OIDC identity provider for the \
            issuer, with the client id as audience). --profile and --group name authkit's \
            sign-in, as for every command; --aws-profile names the AWS profile.
            """
    )

    @Option(
        name: .customLong("aws-profile"), help: ArgumentHelp("The AWS profile to write (`default` for the default one).", valueName: "name")
    )
    var awsProfile: String?

    @Option(name: .customLong("role-arn"), help: ArgumentHelp("The IAM role to assume.", valueName: "arn"))
    var roleARN: String

    @OptionGroup var target: CommandLineTarget

    @Option(help: ArgumentHelp("How long the credentials last (900–43200 s).", valueName: "seconds"))
    var duration: Int?

    @Flag(name: .customLong("print"), help: "Only show what would be written.")
    var printOnly = false

    func validate() throws {
        // --profile is authkit's everywhere; AWS's profile has a name of its own.
        guard let awsProfile else {
            throw ValidationError(
                "name the AWS profile to write with --aws-profile"
                    + (target.signIn.profile.map {
                        " (--profile \($0) names authkit's profile: authkit setup aws --aws-profile \($0) --role-arn …)"
                    }
                        ?? ""))
        }
        guard !awsProfile.isEmpty, awsProfile.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-_.".contains($0)) }) else {
            throw ValidationError("--aws-profile must be a profile name: letters, digits, -, _ and .")
        }
        guard AWSCredentialAdapter.isRoleARN(roleARN) else {
            throw ValidationError("--role-arn must be an IAM role ARN, e.g. arn:aws:iam::123456789012:role/dev")
        }
        if let duration, !(900...43_200).contains(duration) { throw ValidationError("--duration must be between 900 and 43200 seconds") }
    }

    func run() async throws {
        let path = Self.configPath(environment: ProcessInfo.processInfo.environment)
        guard let awsProfile else { throw ExitStatus.usage }
        var words = [Setup.executablePath(), "credential", "aws", "--role-arn", roleARN]
        words += target.words
        if let duration { words += ["--duration", String(duration)] }
        let header = awsProfile == "default" ? "[default]" : "[profile \(awsProfile)]"
        let section = "\(header)\ncredential_process = \(words.map(Setup.shellQuoted).joined(separator: " "))\n"
        if printOnly {
            Terminal.printData("# \(path)\n\(section)")
            return
        }
        do throws(Setup.Failure) {
            Terminal.printError("aws: " + (try Setup.appendSection(section, header: header, to: path, mode: 0o600)))
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
