import ArgumentParser
import AuthKit

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `authkit setup podman --registry R`: podman, skopeo and buildah (containers-auth.json).
struct SetupPodmanCommand: SetupClientCommand {
    static func status() -> SetupStatus {
        CredHelpersFile(client: "podman", path: authFile(environment: ProcessInfo.processInfo.environment))
            .status(hint: "authkit setup podman --registry HOST")
    }

    static let configuration = CommandConfiguration(
        commandName: "podman",
        abstract: "Make podman, skopeo and buildah use the shared sign-in for one registry.",
        usage: "authkit setup podman --registry <host> [--print] [<options>]",
        discussion: """
            Adds credHelpers["REGISTRY"] = "authkit" to the containers auth file \
            ($REGISTRY_AUTH_FILE, else $XDG_CONFIG_HOME/containers/auth.json, which podman, \
            skopeo and buildah read; containers-auth.json(5)) — every other key kept, written \
            atomically. Links docker-credential-authkit to authkit (they speak docker's \
            credential-helper protocol and find helpers on PATH) and maps the registry in \
            authkit's config file.
            """
    )

    @OptionGroup var options: CredHelpersOptions

    func run() async throws {
        try CredHelpersFile(client: "podman", path: Self.authFile(environment: ProcessInfo.processInfo.environment)).setUp(options)
    }

    /// `$REGISTRY_AUTH_FILE`, else `$XDG_CONFIG_HOME/containers/auth.json` (`~/.config/…`):
    /// the persistent auth file (podman login's default under $XDG_RUNTIME_DIR is gone at reboot).
    static func authFile(environment: [String: String]) -> String {
        if let file = environment["REGISTRY_AUTH_FILE"], file.hasPrefix("/") { return file }
        let config = environment["XDG_CONFIG_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? (environment["HOME"] ?? "") + "/.config"
        return config + "/containers/auth.json"
    }
}
