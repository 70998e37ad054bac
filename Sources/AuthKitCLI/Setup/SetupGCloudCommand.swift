import ArgumentParser
import AuthKit
import JOSE

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `authkit setup gcloud --audience AUD`: an external_account credential configuration.
struct SetupGCloudCommand: SetupClientCommand {
    static func status() -> SetupStatus {
        let path = defaultPath(environment: ProcessInfo.processInfo.environment)
        return FileManager.default.fileExists(atPath: path) ? .setUp(place: path) : .notSetUp(hint: "authkit setup gcloud --audience …")
    }

    static let configuration = CommandConfiguration(
        commandName: "gcloud",
        abstract: "Write a Google Cloud credential configuration that gets its id_token from authkit.",
        usage: "authkit setup gcloud --audience <audience> [--output <file>] [--profile <name>] [--group <name>] [--print]",
        discussion: """
            Writes an external_account credential configuration (workload or workforce \
            identity federation, executable-sourced) whose credential_source runs `authkit \
            credential gcloud`. Use it with GOOGLE_APPLICATION_CREDENTIALS=FILE (or `gcloud auth \
            login --cred-file=FILE`) and GOOGLE_EXTERNAL_ACCOUNT_ALLOW_EXECUTABLES=1.

              authkit setup gcloud --audience //iam.googleapis.com/projects/123/locations/global/workloadIdentityPools/pool/providers/oidc
            """
    )

    @Option(help: ArgumentHelp("The workload or workforce identity pool provider (//iam.googleapis.com/…).", valueName: "audience"))
    var audience: String

    @Option(
        help: ArgumentHelp(
            "Where to write the configuration (default: $XDG_CONFIG_HOME/authkit/gcloud-credentials.json).", valueName: "file"))
    var output: String?

    @Option(
        name: .customLong("token-url"), help: ArgumentHelp("Google's STS.", valueName: "url"))
    var tokenURL = "https://sts.googleapis.com/v1/token"

    @Option(
        name: .customLong("service-account"),
        help: ArgumentHelp("A service account to impersonate (its e-mail address).", valueName: "email"))
    var serviceAccount: String?

    @Option(
        name: .customLong("user-project"),
        help: ArgumentHelp("The workforce pool's user project (workforce pools only).", valueName: "project"))
    var userProject: String?

    @OptionGroup var target: CommandLineTarget

    @Flag(name: .customLong("print"), help: "Only show what would be written.")
    var printOnly = false

    func validate() throws {
        guard audience.hasPrefix("//"), !audience.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value == 0x7F }) else {
            throw ValidationError(
                "--audience must be an identity pool provider, e.g. //iam.googleapis.com/projects/123/locations/global/workloadIdentityPools/pool/providers/oidc"
            )
        }
        do { _ = try EndpointPolicy.check(tokenURL, name: "--token-url") } catch { throw ValidationError("\(error)") }
        if let serviceAccount, !serviceAccount.contains("@") || serviceAccount.contains("/") {
            throw ValidationError("--service-account must be a service account's e-mail address")
        }
    }

    func run() async throws {
        let path = output ?? Self.defaultPath(environment: ProcessInfo.processInfo.environment)
        let command: String
        do throws(Setup.Failure) {
            command = try Self.command([Setup.executablePath(), "credential", "gcloud"] + target.words)
        } catch {
            Terminal.printError("authkit: \(error)")
            throw ExitStatus.usage
        }
        var document: JSONObject = [
            "type": "external_account", "audience": .string(audience), "subject_token_type": .string(GCloudCredentialAdapter.idTokenType),
            "token_url": .string(tokenURL),
            "credential_source": [
                "executable": ["command": .string(command), "timeout_millis": 30000]
            ],
        ]
        if let serviceAccount {
            document["service_account_impersonation_url"] =
                .string("https://iamcredentials.googleapis.com/v1/projects/-/serviceAccounts/\(serviceAccount):generateAccessToken")
        }
        if let userProject { document["workforce_pool_user_project"] = .string(userProject) }
        let text = JSONValue.object(document).serialized(options: [.prettyPrinted]) + "\n"
        if printOnly {
            Terminal.printData("# \(path)\n\(text)")
            return
        }
        do throws(Setup.Failure) {
            try Setup.makeFolder(Setup.directory(of: path), mode: 0o700)
            try Setup.writeAtomically(Array(text.utf8), to: path, mode: 0o600)
        } catch {
            Terminal.printError("authkit: \(error)")
            throw ExitStatus.usage
        }
        Terminal.printError("gcloud: wrote \(path)")
        Terminal.printError(
            "Use it with: export GOOGLE_APPLICATION_CREDENTIALS=\(Setup.shellQuoted(path)) GOOGLE_EXTERNAL_ACCOUNT_ALLOW_EXECUTABLES=1")
    }

    /// The executable's command as Google's libraries run it: split at white space, no shell
    /// (so no quoting either); a word with white space in it cannot be written.
    static func command(_ words: [String]) throws(Setup.Failure) -> String {
        if let spaced = words.first(where: { $0.contains(where: \.isWhitespace) || $0.isEmpty }) {
            throw Setup.Failure(
                description:
                    "Google's libraries split the credential command at spaces and use no shell, so ‘\(spaced)’ cannot be one word of it; run authkit from a path without spaces"
            )
        }
        return words.joined(separator: " ")
    }

    static func defaultPath(environment: [String: String]) -> String {
        let config = environment["XDG_CONFIG_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? (environment["HOME"] ?? "") + "/.config"
        return config + "/authkit/gcloud-credentials.json"
    }
}
