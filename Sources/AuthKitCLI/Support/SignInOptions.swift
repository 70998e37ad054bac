import ArgumentParser
import AuthKit
import AuthKitCore

/// The sign-in a command names — `--profile`, `--group`, `--storage` — declared once: every
/// command that uses or sets up a sign-in takes these through `@OptionGroup` (``SessionOptions``,
/// ``SetupTargetOptions``, ``CommandLineTarget``), and the fast paths read the same names
/// (``FastPathScanner``), so an option of the sign-in is written in one place.
struct SignInOptions: ParsableArguments {
    @Option(
        name: .customLong(OptionName.profile),
        help: ArgumentHelp(
            "The profile to use (a [profile NAME] section of the config file, or the built-in `microsoft`).",
            valueName: "name"), completion: .custom(ShellCompletion.profiles))
    var profile: String?

    @Option(
        name: .customLong(OptionName.group),
        help: ArgumentHelp(
            "The group whose shared sign-in to use, e.g. com.example.shared (default: the profile's, else `authkit`).",
            valueName: "name"), completion: .custom(ShellCompletion.groups))
    var group: String?

    @Option(name: .customLong(OptionName.storage), help: ArgumentHelp("Where tokens live: \(StorageChoice.helpList).", valueName: "store"))
    var storage: StorageChoice?

    /// The parsed values as a plain value (ArgumentParser's wrappers trap when read unparsed).
    func selector(account: String? = nil, insecureStorage: Bool = false) -> SignInSelector {
        SignInSelector(profile: profile, group: group, account: account, insecureStorage: insecureStorage, storage: storage)
    }
}

/// `--account`, for the commands that use one account of a group (`token`, `search`, the
/// plug-ins).
struct AccountOption: ParsableArguments {
    @Option(
        name: .customLong(OptionName.account),
        help: ArgumentHelp("The account, when the group holds several (default: the group's most recent sign-in).", valueName: "name"))
    var account: String?
}
