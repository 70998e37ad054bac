import ArgumentParser
import AuthKit
import JOSE

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `authkit credential aws --role-arn ARN`: an AWS `credential_process`.
struct CredentialAWSCommand: CredentialAdapterCommand {
    static let configuration = CommandConfiguration(
        commandName: "aws",
        abstract: "An AWS credential_process: temporary AWS credentials for a role, from the sign-in's verified id_token.",
        usage: "authkit credential aws --role-arn <arn> [--duration <seconds>] [<options>]",
        discussion: """
            Exchanges the shared sign-in's verified id_token at AWS STS \
            (AssumeRoleWithWebIdentity) for the role's temporary credentials and prints the \
            document the AWS CLI and SDKs read from a credential_process. The credentials are \
            kept in the token store beside the sign-in (never a plain file) and reused until 16 \
            minutes before they expire (and never past the duration asked for, 12 hours at \
            most), so a loop of aws calls makes one STS call; they are kept apart by role, \
            duration, STS endpoint, region and account. STS is \
            AWS_ENDPOINT_URL_STS, else AWS_ENDPOINT_URL when it is AWS's or on loopback (another \
            host there is every service's, and gets no id_token), else the AWS_REGION's endpoint. Write \
            the profile with `authkit setup aws --aws-profile NAME --role-arn ARN`:

              [profile dev]
              credential_process = /usr/local/bin/authkit credential aws --role-arn arn:aws:iam::123456789012:role/dev
            """
    )

    @OptionGroup var options: CredentialOptions

    @Option(name: .customLong("role-arn"), help: ArgumentHelp("The IAM role to assume.", valueName: "arn"))
    var roleARN: String

    @Option(help: ArgumentHelp("How long the credentials last (900–43200 s; default: the role's, usually 3600).", valueName: "seconds"))
    var duration: Int?

    func validate() throws {
        guard AWSCredentialAdapter.isRoleARN(roleARN) else {
            throw ValidationError("--role-arn must be an IAM role ARN, e.g. arn:aws:iam::123456789012:role/dev")
        }
        if let duration, !(900...43_200).contains(duration) { throw ValidationError("--duration must be between 900 and 43200 seconds") }
        if !options.scopes.isEmpty || !options.resources.isEmpty {
            throw ValidationError("credential aws takes no --scope or --resource: STS takes the sign-in's id_token")
        }
    }

    typealias Adapter = AWSCredentialAdapter

    var flags: CredentialFlags {
        var own = ["--role-arn": roleARN]
        if let duration { own["--duration"] = String(duration) }
        return options.flags(own: own)
    }
}

/// The AWS CLI's `credential_process` contract: `{"Version":1,"AccessKeyId",
/// "SecretAccessKey","SessionToken","Expiration"}` on standard output, errors on standard error.
enum AWSCredentialAdapter: CredentialAdapter {
    static let client = "aws"
    static let actions: [String] = []
    static let ownOptions: [String: String?] = ["--role-arn": nil, "--duration": nil]
    static var command: any CredentialAdapterCommand.Type { CredentialAWSCommand.self }
    static var setupCommands: [any SetupClientCommand.Type] { [SetupAWSCommand.self] }

    static func isRoleARN(_ text: String) -> Bool {
        let parts = text.split(separator: ":", maxSplits: 5, omittingEmptySubsequences: false)
        return parts.count == 6 && parts[0] == "arn" && parts[2] == "iam" && parts[5].hasPrefix("role/") && text.utf8.count <= 2048
            && !text.unicodeScalars.contains { $0.value <= 0x20 || $0.value == 0x7F }
    }

    static func accepts(_ flags: CredentialFlags) -> Bool {
        guard let role = flags.own["--role-arn"], isRoleARN(role), flags.scopes.isEmpty, flags.resources.isEmpty else { return false }
        if let text = flags.own["--duration"] {
            guard let duration = Int(text), (900...43_200).contains(duration) else { return false }
        }
        return true
    }

    nonisolated(nonsending) static func respond(to flags: CredentialFlags) async throws(CredentialPlugin.Failure) -> CredentialAnswer {
        guard let role = flags.own["--role-arn"] else {
            throw CredentialPlugin.Failure(message: "authkit: credential aws needs --role-arn", code: ExitStatus.usage)
        }
        let settings = flags.selector
        let environment = ProcessInfo.processInfo.environment
        let credentials: AWSCredentials
        do throws(AWSExchangeError) {
            let endpoint: URL, region: String?
            do {
                endpoint = try STSWebIdentity.endpoint(environment: environment)
                region = try STSWebIdentity.region(environment: environment)
            } catch { throw .sts(error) }
            let session: SharedSession
            do throws(AuthKitError) {
                session = try settings.session(for: try settings.resolveProfile())
            } catch { throw .authKit(error) }
            credentials = try await AWSCredentialCache(session: session).credentials(
                roleARN: role, durationSeconds: flags.own["--duration"].flatMap(Int.init), account: settings.account, endpoint: endpoint,
                region: region)
        } catch {
            switch error {
            case .authKit(let error): throw CredentialPlugin.failure(error, settings: settings)
            case .sts(let failure): throw CredentialPlugin.Failure(message: "authkit: \(failure)", code: exitCode(for: failure.category))
            }
        }
        let document: JSONValue = [
            "Version": 1, "AccessKeyId": .string(credentials.accessKeyID), "SecretAccessKey": .string(credentials.secretAccessKey),
            "SessionToken": .string(credentials.sessionToken),
            "Expiration": .string(RelativeTime.rfc3339(Date(timeIntervalSince1970: credentials.expiration))),
        ]
        return CredentialAnswer(output: document.serialized() + "\n")
    }
}
