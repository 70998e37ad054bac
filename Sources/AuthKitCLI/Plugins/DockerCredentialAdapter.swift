import ArgumentParser
import AuthKit
import AuthKitCore
import JOSE

/// `authkit credential docker get|store|erase|list`, also run as `docker-credential-authkit`
/// (the docker-credential-helpers protocol).
struct CredentialDockerCommand: CredentialAdapterCommand {
    static let configuration = CommandConfiguration(
        commandName: "docker",
        abstract: "A docker credential helper: the shared sign-in's access token for mapped registries.",
        usage: "authkit credential docker [<options>] get|store|erase|list",
        discussion: """
            docker runs `docker-credential-authkit get|store|erase|list` (a link to authkit, \
            made by `authkit setup docker`). get reads the registry on standard input and \
            answers {"ServerURL", "Username", "Secret"} with the access token; a registry \
            that is not mapped in the config file is "credentials not found in native \
            keychain" (exit 1), and docker goes on anonymously. store and erase (docker login \
            and logout) change nothing: the shared sign-in stays. list answers the mapped \
            registries.

              [registry "registry.example.com"]
              profile = work
              username = oauth2

            With --profile or --group (for scripts and wrappers) every registry asked about \
            gets that sign-in's token.
            """
    )

    @OptionGroup var options: CredentialOptions

    @Argument(help: ArgumentHelp("What docker asks: get, store, erase or list.", valueName: "action"))
    var action: String

    typealias Adapter = DockerCredentialAdapter

    var flags: CredentialFlags { options.flags(action: action) }
}

/// The docker-credential-helpers protocol: a registry in, `{"ServerURL", "Username",
/// "Secret"}` out, for mapped registries only.
enum DockerCredentialAdapter: CredentialAdapter {
    static let client = "docker"
    /// The link `authkit setup docker` makes: docker runs `docker-credential-<helper>`.
    static let executableAlias: String? = "docker-credential-authkit"
    static let actions = ["get", "store", "erase", "list"]
    static var command: any CredentialAdapterCommand.Type { CredentialDockerCommand.self }
    static var setupCommands: [any SetupClientCommand.Type] { [SetupDockerCommand.self, SetupPodmanCommand.self] }

    /// docker's "no credentials" (``DockerCredentialText/notFound``).
    static let notFound = DockerCredentialText.notFound

    nonisolated(nonsending) static func respond(to flags: CredentialFlags) async throws(CredentialPlugin.Failure) -> CredentialAnswer {
        // list needs no request; the others read one line (get, erase) or a JSON object (store).
        let input = flags.action == "list" ? "" : try CredentialPlugin.readInput()
        switch flags.action {
        case "store", "erase":
            return .none  // docker login/logout: the shared sign-in is neither replaced nor removed
        case "list":
            let registries = flags.namesSignIn ? [] : CredentialMap.registries(in: try CredentialPlugin.config())
            return CredentialAnswer(output: DockerCredentialText.list(registries))
        default:
            let server = DockerCredentialText.server(input)
            guard !server.isEmpty else {
                throw CredentialPlugin.Failure(message: "authkit: docker sent no registry on standard input", code: ExitStatus.usage)
            }
            let target: CredentialTarget
            if flags.namesSignIn {
                target = flags.target(entry: server)
            } else {
                let file = try CredentialPlugin.config()
                // Why a registry got a token or nothing, for AUTHKIT_LOG=debug (never a token).
                guard let mapped = CredentialMap.registryTarget(server: server, in: file) else {
                    LogSetup.logger.debug(
                        "no [registry] mapping for this registry; docker goes on without credentials",
                        metadata: [
                            "registry": "\(CredentialMap.registryHost(server))", "config": "\(file.path)",
                        ])
                    return CredentialAnswer(output: notFound + "\n", status: ExitStatus.loginNeeded)
                }
                LogSetup.logger.debug(
                    "mapped",
                    metadata: [
                        "registry": "\(CredentialMap.registryHost(server))", "entry": "[registry \"\(mapped.entry)\"]",
                        "config": "\(file.path):\(file.registries[mapped.entry]?.line ?? 0)",
                    ])
                target = try flags.applied(to: mapped)
            }
            let token = try await CredentialPlugin.accessToken(for: target, flags)
            return CredentialAnswer(output: DockerCredentialText.answer(server: server, username: target.username, token: token.value))
        }
    }
}
