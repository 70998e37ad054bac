import ArgumentParser
import AuthKit
import AuthKitCore
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

/// The sign-in a configuration that runs authkit names on its command line (AWS's
/// credential_process, Google's executable): the sign-in every command names
/// (``SignInOptions``), written as the configuration's command runs authkit.
struct CommandLineTarget: ParsableArguments {
    @OptionGroup var signIn: SignInOptions

    func validate() throws {
        // Written into another tool's configuration: only what a profile name can be.
        if let profile = signIn.profile, !ProfileName.isValid(profile) {
            throw ValidationError("--profile: ‘\(profile)’ is not a valid profile name (letters, digits, . _ -)")
        }
        if let group = signIn.group {
            do { _ = try SecretGroup(group) } catch { throw ValidationError("--group: \(error)") }
        }
    }

    /// `--profile P --group G --storage S`, as the configuration's command runs authkit.
    var words: [String] { signIn.selector().words }
}
