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

/// `authkit credential CLIENT` (and the clients' executable aliases) without ArgumentParser's
/// start-up cost, as ``TokenFastPath`` does for `token`: clients run these in every git fetch,
/// docker pull and kubectl call. Anything unusual (help, an unknown flag, a malformed value)
/// returns nil, and ArgumentParser parses as usual.
enum CredentialFastPath {
    static func parse(_ arguments: [String]) -> (client: String, flags: CredentialFlags)? {
        guard arguments.count >= 2, arguments[0] == "credential", let adapter = CredentialAdapters.named(arguments[1]) else { return nil }
        var scanner = FastPathScanner(authkitArguments: arguments, index: 2)
        guard
            var found = scanner.plugIn(
                minTTL: CredentialFlags().minTTL, takesAction: !adapter.actions.isEmpty, ownFlags: adapter.ownFlags,
                own: Set(adapter.ownOptions.keys), repeated: adapter.repeatedOptions)
        else { return nil }
        for case let (name, value?) in adapter.ownOptions where found.own[name] == nil { found.own[name] = value }
        guard adapter.actions.isEmpty || found.action != nil else { return nil }
        let options = found.options
        let flags = CredentialFlags(
            selector: options.selector, scopes: options.scopes, resources: options.resources, minTTL: options.minTTL,
            action: found.action ?? "", own: found.own, ownLists: found.ownLists)
        guard adapter.accepts(flags) else { return nil }
        return (adapter.client, flags)
    }

    /// Runs what ``parse(_:)`` found.
    nonisolated(nonsending) static func run(client: String, flags: CredentialFlags) async throws {
        guard let adapter = CredentialAdapters.named(client) else { return }
        try await CredentialPlugin.serve(adapter, flags)
    }
}
