import ArgumentParser
import AuthKit
import ChildProcess
import SecretStore
import JOSE

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#endif

struct SetupTargetOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The profile whose sign-in the client gets.", valueName: "name"))
    var profile: String?

    @Option(help: ArgumentHelp("The group whose sign-in the client gets.", valueName: "name"))
    var group: String?

    @Option(name: .customLong("scope"), help: ArgumentHelp("A scope the token must carry (repeatable).", valueName: "scope"))
    var scopes: [String] = []

    @Option(
        help: ArgumentHelp(
            "Where the sign-in lives (\(StorageChoice.names)), written into the client's configuration.",
            valueName: "store"))
    var storage: StorageChoice?

    /// The mapping keys these options set, for authkit's config file.
    var entries: [(String, String)] {
        var entries: [(String, String)] = []
        if let profile { entries.append(("profile", profile)) }
        if let group { entries.append(("group", group)) }
        if !scopes.isEmpty { entries.append(("scopes", scopes.joined(separator: " "))) }
        if let storage { entries.append(("storage", storage.rawValue)) }
        return entries
    }
}
