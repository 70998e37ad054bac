import ArgumentParser
import AuthKit
import JOSE

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `authkit credential kubectl`: a client-go exec credential plug-in (`ExecCredential`,
/// `client.authentication.k8s.io/v1` and `/v1beta1`).
struct CredentialKubectlCommand: CredentialAdapterCommand {
    static let configuration = CommandConfiguration(
        commandName: "kubectl",
        abstract: "A kubectl exec credential plug-in: an ExecCredential with the shared sign-in's token.",
        usage: "authkit credential kubectl [--token-type <type>] [<options>]",
        discussion: """
            kubectl runs it for a user whose kubeconfig entry has an exec section (write one \
            with `authkit setup kubectl --context NAME`). It answers one ExecCredential of the \
            apiVersion kubectl asked for in KUBERNETES_EXEC_INFO (v1beta1 without it) with an \
            access token (AKS with Entra) or, with --token-type id-token, a verified id_token \
            (API servers started with --oidc-issuer-url). It never prompts and never starts a \
            sign-in: not signed in, it exits 1 with one line naming `authkit login`.
            """
    )

    enum TokenType: String, ExpressibleByArgument, CaseIterable {
        case accessToken = "access-token"
        case idToken = "id-token"
    }

    @OptionGroup var options: CredentialOptions

    @Option(name: .customLong("token-type"), help: "access-token (default) or id-token.")
    var tokenType: TokenType = .accessToken

    static let v1 = KubectlCredentialAdapter.v1
    static let v1beta1 = KubectlCredentialAdapter.v1beta1

    func validate() throws {
        if tokenType == .idToken && !options.scopes.isEmpty { throw ValidationError("--token-type id-token takes no --scope") }
    }

    typealias Adapter = KubectlCredentialAdapter

    var flags: CredentialFlags { options.flags(own: ["--token-type": tokenType.rawValue]) }
}

/// client-go's exec credential plug-in: `KUBERNETES_EXEC_INFO` in, one `ExecCredential` out.
enum KubectlCredentialAdapter: CredentialAdapter {
    static let client = "kubectl"
    static let actions: [String] = []
    static let ownOptions: [String: String?] = ["--token-type": CredentialKubectlCommand.TokenType.accessToken.rawValue]
    static var command: any CredentialAdapterCommand.Type { CredentialKubectlCommand.self }
    static var setupCommands: [any SetupClientCommand.Type] { [SetupKubectlCommand.self] }

    static let v1 = "client.authentication.k8s.io/v1"
    static let v1beta1 = "client.authentication.k8s.io/v1beta1"

    static func accepts(_ flags: CredentialFlags) -> Bool {
        guard let type = tokenType(flags) else { return false }
        return type == .accessToken || flags.scopes.isEmpty
    }

    static func tokenType(_ flags: CredentialFlags) -> CredentialKubectlCommand.TokenType? {
        CredentialKubectlCommand.TokenType(rawValue: flags.own["--token-type"] ?? "access-token")
    }

    nonisolated(nonsending) static func respond(to flags: CredentialFlags) async throws(CredentialPlugin.Failure) -> CredentialAnswer {
        let apiVersion = try Self.apiVersion(ProcessInfo.processInfo.environment["KUBERNETES_EXEC_INFO"])
        let target = flags.target(entry: "kubectl")
        let value: String, expiresAt: Date
        switch tokenType(flags) ?? .accessToken {
        case .accessToken:
            let token = try await CredentialPlugin.accessToken(for: target, flags)
            (value, expiresAt) = (token.value, token.expiresAt)
        case .idToken:
            let token = try await CredentialPlugin.idToken(for: target, flags)
            (value, expiresAt) = (token.value, token.expiresAt)
        }
        let answer: JSONValue = [
            "apiVersion": .string(apiVersion), "kind": "ExecCredential",
            "status": ["token": .string(value), "expirationTimestamp": .string(RelativeTime.rfc3339(expiresAt))],
        ]
        return CredentialAnswer(output: answer.serialized() + "\n")
    }

    /// The apiVersion kubectl asked for (KUBERNETES_EXEC_INFO), read strictly; v1beta1 when
    /// the variable is absent (kubectl before 1.20 or another client).
    static func apiVersion(_ info: String?) throws(CredentialPlugin.Failure) -> String {
        guard let info, !info.isEmpty else { return v1beta1 }
        let value: JSONValue
        do {
            value = try JSONValue(parsing: info, limits: JSONLimits(maximumBytes: 64 << 10, maximumDepth: 16))
        } catch {
            throw CredentialPlugin.Failure(
                message: "authkit: KUBERNETES_EXEC_INFO is not valid JSON: \(error.reason)", code: ExitStatus.usage)
        }
        guard let version = value["apiVersion"]?.stringValue else {
            throw CredentialPlugin.Failure(message: "authkit: KUBERNETES_EXEC_INFO has no apiVersion", code: ExitStatus.usage)
        }
        guard version == v1 || version == v1beta1 else {
            throw CredentialPlugin.Failure(
                message: "authkit: kubectl asked for \(version); authkit answers \(v1) and \(v1beta1)", code: ExitStatus.usage)
        }
        return version
    }
}
