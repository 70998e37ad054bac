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

/// Options every credential plug-in takes: the sign-in (as every command names it), the
/// account and the scopes.
struct CredentialOptions: ParsableArguments {
    @OptionGroup var session: SessionOptions

    @OptionGroup var accountOption: AccountOption
    var account: String? { accountOption.account }

    @Option(name: .customLong(OptionName.scope), help: ArgumentHelp("A scope the token must carry (repeatable).", valueName: "scope"))
    var scopes: [String] = []

    @Option(
        name: .customLong(OptionName.resource),
        help: ArgumentHelp("The API the token is for (RFC 8707 resource indicator, repeatable).", valueName: "uri"))
    var resources: [String] = []

    @Option(name: .customLong(OptionName.minTTL), help: ArgumentHelp("Seconds the token must still be valid.", valueName: "seconds"))
    var minTTL: Int = 300

    func validate() throws {
        try TokenRequest.checkMinTTL(minTTL)
        try TokenRequest.checkResources(resources)
    }

    /// The flags these options give, with the client's `action` and own options.
    func flags(action: String = "", own: [String: String] = [:], ownLists: [String: [String]] = [:]) -> CredentialFlags {
        CredentialFlags(
            selector: session.selector(account: account), scopes: scopes, resources: resources, minTTL: minTTL, action: action, own: own,
            ownLists: ownLists.filter { !$0.value.isEmpty })
    }
}
