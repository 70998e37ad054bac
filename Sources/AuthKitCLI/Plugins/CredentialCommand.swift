import ArgumentParser
import AuthKitCore
import AuthKit

#if canImport(Glibc)
import Glibc
#endif

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `authkit credential CLIENT`: the shared sign-in through each client's own credential
/// plug-in protocol (one subcommand per ``CredentialAdapter``).
struct CredentialCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "credential",
        abstract: "Answer a client's credential plug-in protocol with the shared sign-in: \(CredentialAdapters.clientNames).",
        discussion: """
            Each client runs authkit as its plug-in and gets a token of the shared sign-in, \
            refreshed once for all tools when needed. Standard output carries the client's \
            answer and nothing else; errors are one line on standard error. A plug-in never \
            reads the terminal, never opens a browser, never starts a sign-in, and never \
            deletes or revokes the sign-in, whatever the client asks. Set them up with \
            `authkit setup CLIENT`.
            """,
        subcommands: CredentialAdapters.all.map { $0.command }
    )

    /// Not for people: `scripts/package` asks the binary which plug-in links to ship, a line
    /// `LINK CLIENT` each (``CredentialAdapter/executableAlias``), so the package never keeps
    /// its own copy of the adapter list; `LINK CLIENT lean` where the lean client answers the
    /// plug-in under that name (`LeanTokenPlan.plugInsAnswered`), so the link points at it.
    @Flag(name: .customLong("list-links"), help: .hidden)
    var listLinks = false

    func run() async throws {
        guard listLinks else { throw CleanExit.helpRequest(self) }
        Terminal.printData(
            CredentialAdapters.all.compactMap { adapter in
                adapter.executableAlias.map {
                    "\($0) \(adapter.client)\(LeanTokenPlan.plugInsAnswered.contains(adapter.client) ? " lean" : "")\n"
                }
            }.joined())
    }
}
