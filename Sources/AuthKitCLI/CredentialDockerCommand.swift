import ArgumentParser
import AuthKit
import JOSE

/// `authkit credential docker get|store|erase|list`, also run as `docker-credential-authkit`
/// (the docker-credential-helpers protocol).
struct CredentialDockerCommand: AsyncParsableCommand {
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

    @Option(name: .customLong("min-ttl"), help: ArgumentHelp("Seconds the token must still be valid.", valueName: "seconds"))
    var minTTL: Int = 300

    @Argument(help: ArgumentHelp("What docker asks: get, store, erase or list.", valueName: "action"))
    var action: String

    func validate() throws {
        guard TokenRequest.minTTLRange.contains(minTTL) else { throw ValidationError("--min-ttl must be between 0 and 86400 seconds") }
    }

    /// docker recognises exactly this answer as "no credentials" (docker-credential-helpers'
    /// `credentials.NewErrCredentialsNotFound`).
    static let notFound = "credentials not found in native keychain"

    func run() async throws {
        try await Self.serve(CredentialFlags(options, minTTL: minTTL, action: action))
    }

    static func serve(_ options: CredentialFlags) async throws {
        let action = options.action, minTTL = options.minTTL
        try await CredentialPlugin.run { () async throws(CredentialPlugin.Failure) in
            // Checked here, not in validate(): a plug-in's error is one line, not a usage page.
            guard ["get", "store", "erase", "list"].contains(action) else {
                throw CredentialPlugin.Failure(message: "authkit: unknown action ‘\(action)’: docker asks get, store, erase or list", code: ExitStatus.usage)
            }
            // list needs no request; the others read one line (get, erase) or a JSON object (store).
            let input = action == "list" ? "" : try CredentialPlugin.readInput()
            switch action {
            case "store", "erase":
                return  // docker login/logout: the shared sign-in is neither replaced nor removed
            case "list":
                let registries = options.namesSignIn ? [] : CredentialMap.registries(in: try CredentialPlugin.config())
                var object = JSONObject()
                for (server, username) in registries { object[server] = .string(username) }
                Terminal.write(fd: 1, JSONValue.object(object).serialized(options: [.sortedKeys]) + "\n")
            default:
                let server = input.split(separator: "\n").first.map { String($0).trimmingCharacters(in: " \t\r") } ?? ""
                guard !server.isEmpty else {
                    throw CredentialPlugin.Failure(message: "authkit: docker sent no registry on standard input", code: ExitStatus.usage)
                }
                let target: CredentialTarget
                if options.namesSignIn {
                    target = options.target(entry: server)
                } else if let mapped = CredentialMap.registryTarget(server: server, in: try CredentialPlugin.config()) {
                    target = mapped
                } else {
                    Terminal.write(fd: 1, Self.notFound + "\n")
                    throw CredentialPlugin.Failure(message: "", code: ExitStatus.loginNeeded)  // the answer is on stdout
                }
                let token = try await CredentialPlugin.accessToken(for: target, insecureStorage: options.insecureStorage, storage: options.storage, minTTL: minTTL)
                let answer: JSONValue = ["ServerURL": .string(server), "Username": .string(target.username), "Secret": .string(token.value)]
                Terminal.write(fd: 1, answer.serialized() + "\n")
            }
        }
    }
}

extension String {
    func trimmingCharacters(in set: String) -> String {
        var scalars = Substring(self)
        while let first = scalars.first, set.contains(first) { scalars.removeFirst() }
        while let last = scalars.last, set.contains(last) { scalars.removeLast() }
        return String(scalars)
    }
}
