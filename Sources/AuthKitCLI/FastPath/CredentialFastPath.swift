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
        var options = FastPathOptions(minTTL: CredentialFlags().minTTL)
        var own: [String: String] = [:]
        var ownLists: [String: [String]] = [:]
        var action: String?
        var flagsSeen: Set<String> = []
        while scanner.index < arguments.count {
            let argument = arguments[scanner.index]
            if !argument.hasPrefix("-") {
                guard action == nil, !adapter.actions.isEmpty else { return nil }
                action = argument
                scanner.index += 1
                continue
            }
            switch scanner.shared(argument, into: &options) {
            case .handled: break
            case .malformed: return nil
            case .notShared where adapter.ownFlags.contains(argument):
                guard flagsSeen.insert(argument).inserted else { return nil }
            case .notShared where adapter.repeatedOptions.contains(FastPathScanner.name(of: argument)):
                let name = FastPathScanner.name(of: argument)
                guard let text = scanner.value(argument, name) else { return nil }
                ownLists[name, default: []].append(text)
            case .notShared:
                let name = FastPathScanner.name(of: argument)
                guard adapter.ownOptions.keys.contains(name), own[name] == nil, let text = scanner.value(argument, name) else { return nil }
                own[name] = text
            }
            scanner.index += 1
        }
        for case let (name, value?) in adapter.ownOptions where own[name] == nil { own[name] = value }
        guard adapter.actions.isEmpty || action != nil else { return nil }
        let flags = CredentialFlags(
            selector: options.selector, scopes: options.scopes, resources: options.resources, minTTL: options.minTTL,
            action: action ?? "", own: own, ownLists: ownLists)
        guard adapter.accepts(flags) else { return nil }
        return (adapter.client, flags)
    }

    /// Runs what ``parse(_:)`` found.
    nonisolated(nonsending) static func run(client: String, flags: CredentialFlags) async throws {
        guard let adapter = CredentialAdapters.named(client) else { return }
        try await CredentialPlugin.serve(adapter, flags)
    }
}
