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
struct CredentialKubectlCommand: AsyncParsableCommand {
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

    @Option(name: .customLong("min-ttl"), help: ArgumentHelp("Seconds the token must still be valid.", valueName: "seconds"))
    var minTTL: Int = 300

    @Option(name: .customLong("token-type"), help: "access-token (default) or id-token.")
    var tokenType: TokenType = .accessToken

    static let v1 = "client.authentication.k8s.io/v1"
    static let v1beta1 = "client.authentication.k8s.io/v1beta1"

    func validate() throws {
        guard TokenRequest.minTTLRange.contains(minTTL) else { throw ValidationError("--min-ttl must be between 0 and 86400 seconds") }
        if tokenType == .idToken && !options.scopes.isEmpty { throw ValidationError("--token-type id-token takes no --scope") }
    }

    func run() async throws {
        var flags = CredentialFlags(options, minTTL: minTTL)
        flags.tokenType = tokenType
        try await Self.serve(flags)
    }

    static func serve(_ options: CredentialFlags) async throws {
        let minTTL = options.minTTL, tokenType = options.tokenType
        try await CredentialPlugin.run { () async throws(CredentialPlugin.Failure) in
            let apiVersion = try Self.apiVersion(ProcessInfo.processInfo.environment["KUBERNETES_EXEC_INFO"])
            let target = options.target(entry: "kubectl")
            let value: String, expiresAt: Date
            switch tokenType {
            case .accessToken:
                let token = try await CredentialPlugin.accessToken(for: target, insecureStorage: options.insecureStorage, storage: options.storage, minTTL: minTTL)
                (value, expiresAt) = (token.value, token.expiresAt)
            case .idToken:
                let token = try await CredentialPlugin.idToken(for: target, insecureStorage: options.insecureStorage, storage: options.storage, minTTL: minTTL)
                (value, expiresAt) = (token.value, token.expiresAt)
            }
            let answer: JSONValue = [
                "apiVersion": .string(apiVersion), "kind": "ExecCredential",
                "status": ["token": .string(value), "expirationTimestamp": .string(RelativeTime.rfc3339(expiresAt))],
            ]
            Terminal.write(fd: 1, answer.serialized() + "\n")
        }
    }

    /// The apiVersion kubectl asked for (KUBERNETES_EXEC_INFO), read strictly; v1beta1 when
    /// the variable is absent (kubectl before 1.20 or another client).
    static func apiVersion(_ info: String?) throws(CredentialPlugin.Failure) -> String {
        guard let info, !info.isEmpty else { return v1beta1 }
        let value: JSONValue
        do {
            value = try JSONValue(parsing: info, limits: JSONLimits(maximumBytes: 64 << 10, maximumDepth: 16))
        } catch {
            throw CredentialPlugin.Failure(message: "authkit: KUBERNETES_EXEC_INFO is not valid JSON: \(error.reason)", code: ExitStatus.usage)
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
