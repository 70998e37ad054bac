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

/// Which sign-in a set-up client gets — the sign-in every command names (``SignInOptions``) —
/// and the scopes its token must carry: the options `setup git|docker|podman|kubectl|cargo` share.
struct SetupTargetOptions: ParsableArguments {
    @OptionGroup var signIn: SignInOptions

    @Option(name: .customLong("scope"), help: ArgumentHelp("A scope the token must carry (repeatable).", valueName: "scope"))
    var scopes: [String] = []

    var profile: String? { signIn.profile }
    var group: String? { signIn.group }
    var storage: StorageChoice? { signIn.storage }

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
