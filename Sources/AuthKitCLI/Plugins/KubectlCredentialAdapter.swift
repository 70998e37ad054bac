import ArgumentParser
import AuthKit
import AuthKitCore
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
            (API servers started with --oidc-issuer-url). With --server (which setup writes, \
            with provideClusterInfo: true) it answers only when kubectl asks for that API \
            server, so a context of another cluster that names the same user gets no token. It \
            never prompts and never starts a sign-in: not signed in, it exits 1 with one line \
            naming `authkit login`.
            """
    )

    enum TokenType: String, ExpressibleByArgument, CaseIterable {
        case accessToken = "access-token"
        case idToken = "id-token"
    }

    @OptionGroup var options: CredentialOptions

    @Option(name: .customLong("token-type"), help: "access-token (default) or id-token.")
    var tokenType: TokenType = .accessToken

    @Option(
        name: .customLong("server"),
        help: ArgumentHelp(
            "Answer only when kubectl asks for this API server, or one of these when repeated (KUBERNETES_EXEC_INFO's spec.cluster.server; the user's exec section needs provideClusterInfo: true).",
            valueName: "url"))
    var servers: [String] = []

    static let v1 = KubectlCredentialAdapter.v1
    static let v1beta1 = KubectlCredentialAdapter.v1beta1

    func validate() throws {
        if tokenType == .idToken && !options.scopes.isEmpty { throw ValidationError("--token-type id-token takes no --scope") }
    }

    typealias Adapter = KubectlCredentialAdapter

    var flags: CredentialFlags { options.flags(own: ["--token-type": tokenType.rawValue], ownLists: ["--server": servers]) }
}

/// client-go's exec credential plug-in: `KUBERNETES_EXEC_INFO` in, one `ExecCredential` out.
enum KubectlCredentialAdapter: CredentialAdapter {
    static let client = "kubectl"
    static let actions: [String] = []
    static let ownOptions: [String: String?] = ["--token-type": CredentialKubectlCommand.TokenType.accessToken.rawValue]
    static let repeatedOptions: Set<String> = ["--server"]
    static var command: any CredentialAdapterCommand.Type { CredentialKubectlCommand.self }
    static var setupCommands: [any SetupClientCommand.Type] { [SetupKubectlCommand.self] }

    static let v1 = KubectlExecInfo.v1
    static let v1beta1 = KubectlExecInfo.v1beta1

    static func accepts(_ flags: CredentialFlags) -> Bool {
        guard let type = tokenType(flags) else { return false }
        return type == .accessToken || flags.scopes.isEmpty
    }

    static func tokenType(_ flags: CredentialFlags) -> CredentialKubectlCommand.TokenType? {
        CredentialKubectlCommand.TokenType(rawValue: flags.own["--token-type"] ?? "access-token")
    }

    nonisolated(nonsending) static func respond(to flags: CredentialFlags) async throws(CredentialPlugin.Failure) -> CredentialAnswer {
        let info = try Self.execInfo(ProcessInfo.processInfo.environment["KUBERNETES_EXEC_INFO"])
        let apiVersion = try Self.apiVersion(info)
        if let bound = flags.ownLists["--server"] { try Self.check(server: Self.server(info), boundTo: bound) }
        if let asked = Self.server(info) { try Self.checkTransport(asked) }
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
        let expiry = Int(clamping: expiresAt.timeIntervalSince1970.rounded(.down))
        return CredentialAnswer(output: KubectlExecInfo.answer(apiVersion: apiVersion, token: value, expiresAt: expiry))
    }

    /// KUBERNETES_EXEC_INFO, read strictly; nil when the variable is absent (kubectl before
    /// 1.20 or another client).
    static func execInfo(_ info: String?) throws(CredentialPlugin.Failure) -> JSONValue? {
        guard let info, !info.isEmpty else { return nil }
        do {
            return try JSONValue(parsing: info, limits: KubectlExecInfo.limits)
        } catch {
            throw CredentialPlugin.Failure(
                message: "authkit: KUBERNETES_EXEC_INFO is not valid JSON: \(error.reason)", code: ExitStatus.usage)
        }
    }

    /// The API server kubectl asks for (`spec.cluster.server`, sent only with
    /// `provideClusterInfo: true`).
    static func server(_ info: JSONValue?) -> String? { KubectlExecInfo.server(info) }

    /// A plug-in bound to API servers (`--server`, one per context that shares the user
    /// entry) answers only for them: a kubeconfig merged from several files can give another
    /// cluster's context this user entry, and client-go would send that cluster the token.
    /// The same URL up to the case of its scheme and host and a trailing `/`.
    static func check(server asked: String?, boundTo bound: [String]) throws(CredentialPlugin.Failure) {
        let named = bound.map(shown).joined(separator: ", ")
        guard let asked else {
            throw CredentialPlugin.Failure(
                message:
                    "authkit: this plug-in answers only for \(named) (--server), but kubectl did not say which API server asks (set provideClusterInfo: true in the user's exec section, or run authkit setup kubectl again)",
                code: ExitStatus.usage)
        }
        guard bound.contains(where: { normalized($0) == normalized(asked) }) else {
            throw CredentialPlugin.Failure(
                message:
                    "authkit: kubectl asked for a token for \(shown(asked)), but this user's plug-in answers only for \(named) (--server): no token given; authkit setup kubectl --context NAME adds a context's server",
                code: ExitStatus.usage)
        }
    }

    /// A server URL as a message may show it: without user info (a password, perhaps), on one
    /// line.
    static func shown(_ server: String) -> String {
        var text = server
        if let separator = text.firstRange(of: "://") {
            let rest = text[separator.upperBound...]
            let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) ?? rest.endIndex
            if let at = rest[..<authorityEnd].lastIndex(of: "@") {
                text = String(text[..<separator.upperBound] + rest[rest.index(after: at)...])
            }
        }
        return ProviderText.clean(text) ?? "(unreadable)"
    }

    /// A bearer token goes over https, or over http to a loopback address only: kubectl would
    /// send it to the server as it is.
    static func checkTransport(_ server: String) throws(CredentialPlugin.Failure) {
        guard let url = URL(string: server), let scheme = url.scheme, let host = url.host(percentEncoded: true), !host.isEmpty,
            CredentialMap.carriesTokens(scheme: scheme, host: host)
        else {
            throw CredentialPlugin.Failure(
                message:
                    "authkit: kubectl asked for a token for \(shown(server)), which is not an https URL (http only on loopback): no token given",
                code: ExitStatus.usage)
        }
    }

    /// `url` with its scheme and authority in lower case and no trailing `/`.
    static func normalized(_ url: String) -> String { KubectlExecInfo.normalized(url) }

    /// The apiVersion kubectl asked for; v1beta1 when KUBERNETES_EXEC_INFO is absent.
    static func apiVersion(_ value: JSONValue?) throws(CredentialPlugin.Failure) -> String {
        guard let value else { return v1beta1 }
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
