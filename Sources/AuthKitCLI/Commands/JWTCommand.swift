import ArgumentParser

/// `authkit jwt …`: debugging aids for JSON Web Tokens.
struct JWTCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "jwt",
        abstract: "Inspect and verify JSON Web Tokens.",
        subcommands: [
            JWTVerifyCommand.self
        ]
    )
}
