import ArgumentParser
import AuthKit
import JOSE

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `authkit credential gcloud`: an executable source of Google's external-account credentials.
struct CredentialGCloudCommand: CredentialAdapterCommand {
    static let configuration = CommandConfiguration(
        commandName: "gcloud",
        abstract: "An executable-sourced credential for Google Cloud workload/workforce identity federation.",
        discussion: """
            Google's auth libraries (and gcloud) run it for an external_account credential \
            configuration whose credential_source is this command (write one with `authkit \
            setup gcloud --audience …`), and exchange the verified id_token it prints at \
            Google's STS: {"version":1,"success":true,"token_type":"urn:ietf:params:oauth:token-type:id_token",\
            "id_token":…,"expiration_time":…}. A failure is {"version":1,"success":false,"code":…,\
            "message":…} with a non-zero exit. The libraries need \
            GOOGLE_EXTERNAL_ACCOUNT_ALLOW_EXECUTABLES=1. authkit never writes the \
            configuration's output_file: the id_token stays in the token store. In the \
            libraries' interactive mode (GOOGLE_EXTERNAL_ACCOUNT_INTERACTIVE=1, whose output is \
            the terminal) it answers a failure naming `authkit login`, and to a revocation \
            (GOOGLE_EXTERNAL_ACCOUNT_REVOKE=1) success without revoking anything: neither \
            gets a token.
            """
    )

    @OptionGroup var options: CredentialOptions

    func validate() throws {
        if !options.scopes.isEmpty || !options.resources.isEmpty {
            throw ValidationError("credential gcloud takes no --scope or --resource: Google's STS takes the sign-in's id_token")
        }
    }

    typealias Adapter = GCloudCredentialAdapter

    var flags: CredentialFlags { options.flags() }
}

/// Google's executable-sourced credential contract (google-auth `pluggable`).
enum GCloudCredentialAdapter: CredentialAdapter {
    static let client = "gcloud"
    static let actions: [String] = []
    static var command: any CredentialAdapterCommand.Type { CredentialGCloudCommand.self }
    static var setupCommands: [any SetupClientCommand.Type] { [SetupGCloudCommand.self] }

    static let idTokenType = "urn:ietf:params:oauth:token-type:id_token"
    static let jwtType = "urn:ietf:params:oauth:token-type:jwt"

    static func accepts(_ flags: CredentialFlags) -> Bool { flags.scopes.isEmpty && flags.resources.isEmpty }

    nonisolated(nonsending) static func respond(to flags: CredentialFlags) async throws(CredentialPlugin.Failure) -> CredentialAnswer {
        let environment = ProcessInfo.processInfo.environment
        // The libraries' revocation ("sign out of this configuration") expects only success or
        // failure: the shared sign-in belongs to every tool of the group and is never revoked
        // for one client, and no token goes where none is asked for.
        if environment["GOOGLE_EXTERNAL_ACCOUNT_REVOKE"] == "1" {
            let answer: JSONValue = ["version": 1, "success": true]
            return CredentialAnswer(output: answer.serialized() + "\n")
        }
        // Interactive mode runs this with the person's terminal as standard output and reads
        // the answer from output_file, which authkit never writes: a token printed there would
        // land in the scrollback and the login fail anyway.
        if environment["GOOGLE_EXTERNAL_ACCOUNT_INTERACTIVE"] == "1" {
            return failure(
                code: "401",
                message:
                    "authkit signs in with `authkit login`, not in Google's interactive mode; use this configuration non-interactively",
                status: ExitStatus.usage)
        }
        let wanted = environment["GOOGLE_EXTERNAL_ACCOUNT_TOKEN_TYPE"] ?? idTokenType
        guard wanted == idTokenType || wanted == jwtType else {
            return failure(
                code: "400", message: "authkit gives OIDC id_tokens only; set subject_token_type to \(idTokenType)",
                status: ExitStatus.usage)
        }
        let token: IDToken
        do throws(CredentialPlugin.Failure) {
            // google-auth reads standard error into the answer: a warning there would break it.
            token = try await CredentialPlugin.idToken(for: flags.target(entry: "gcloud"), flags, warn: false)
        } catch {
            return failure(code: error.code == ExitStatus.loginNeeded ? "401" : "500", message: error.message, status: error.code)
        }
        let answer: JSONValue = [
            "version": 1, "success": true, "token_type": .string(wanted), "id_token": .string(token.value),
            "expiration_time": .number(JSONNumber(Int(clamping: token.expiresAt.timeIntervalSince1970))),
        ]
        return CredentialAnswer(output: answer.serialized() + "\n")
    }

    /// The contract's failure document on standard output (the libraries show its message), the
    /// same one line on standard error, and a non-zero exit.
    static func failure(code: String, message: String, status: ExitCode) -> CredentialAnswer {
        let answer: JSONValue = ["version": 1, "success": false, "code": .string(code), "message": .string(message)]
        return CredentialAnswer(output: answer.serialized() + "\n", status: status, message: message)
    }
}
