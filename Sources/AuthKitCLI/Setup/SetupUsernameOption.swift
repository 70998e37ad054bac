import ArgumentParser

/// The user name sent beside the token, for the clients that send one (git's and docker's
/// protocols; cargo sends the token alone).
struct SetupUsernameOption: ParsableArguments {
    @Option(help: ArgumentHelp("The user name sent with the token (default oauth2).", valueName: "name"))
    var username: String?

    /// The target's mapping keys with the user name, for authkit's config file.
    func entries(_ target: SetupTargetOptions) -> [(String, String)] {
        target.entries + (username.map { [("username", $0)] } ?? [])
    }
}
