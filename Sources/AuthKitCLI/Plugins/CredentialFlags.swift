import ArgumentParser
import AuthKit
import AuthKitCore

#if canImport(Glibc)
import Glibc
#endif

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What a plug-in was asked, however it was parsed (ArgumentParser or ``CredentialFastPath``).
struct CredentialFlags: Equatable {
    var selector = SignInSelector()
    var scopes: [String] = []
    var resources: [String] = []
    var minTTL = FastPathOptions.pluginMinTTL
    /// The client's action word (empty for clients that pass none).
    var action = ""
    /// The client's own options (``CredentialAdapter/ownOptions``), by name.
    var own: [String: String] = [:]
    /// The client's own options given more than once (``CredentialAdapter/repeatedOptions``),
    /// by name, in order; absent when not given.
    var ownLists: [String: [String]] = [:]

    /// True when the command line names the sign-in (then every host is served).
    var namesSignIn: Bool { selector.profile != nil || selector.group != nil }

    /// The target the command line describes.
    func target(entry: String, username: String = "oauth2") -> CredentialTarget {
        CredentialTarget(
            entry: entry, profile: selector.profile, group: selector.group, account: selector.account,
            scopes: scopes.isEmpty ? nil : scopes, resources: resources, username: username)
    }

    /// A config mapping's target with what the command line names on top: its account and its
    /// scopes (replacing the mapping's), its resources where the mapping names none. A mapping
    /// and a command line that name different resources are refused: neither may quietly give
    /// a token for another API than the other asked for.
    func applied(to mapped: CredentialTarget) throws(CredentialPlugin.Failure) -> CredentialTarget {
        guard let target = mapped.applying(account: selector.account, scopes: scopes, resources: resources) else {
            throw CredentialPlugin.Failure(
                message: "authkit: the mapping for \(ProviderText.displayable(mapped.entry)) names the resource "
                    + "\(mapped.resources.map(ProviderText.displayable).joined(separator: " ")), the command line "
                    + "\(resources.map(ProviderText.displayable).joined(separator: " ")); name it in one place",
                code: ExitStatus.usage)
        }
        return target
    }
}
