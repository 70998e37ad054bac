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

/// Which sign-in a set-up client gets: the options `setup git|docker|kubectl` share.
/// The sign-in a configuration that runs authkit names on its command line (AWS's
/// credential_process, Google's executable): its group and store.
struct CommandLineTarget: ParsableArguments {
    @Option(help: ArgumentHelp("The group whose sign-in it uses.", valueName: "name"))
    var group: String?

    @Option(help: ArgumentHelp("Where the sign-in lives (\(StorageChoice.names)).", valueName: "store"))
    var storage: StorageChoice?

    func validate() throws {
        if let group {
            do { _ = try SecretGroup(group) } catch { throw ValidationError("--group: \(error)") }
        }
    }

    /// `--group G --storage S`, as the configuration's command runs authkit.
    var words: [String] {
        (group.map { ["--group", $0] } ?? []) + (storage.map { ["--storage", $0.rawValue] } ?? [])
    }
}
