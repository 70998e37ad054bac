import Testing
@testable import AuthKitCLI

/// The command `setup gcloud` writes is what Google's libraries run: split at white space, no
/// shell, so no quoting.
@Suite struct SetupGCloudCommandTests {
    @Test func theCommandIsWordsWithoutQuotes() throws {
        #expect(
            try SetupGCloudCommand.command(["/usr/bin/authkit", "credential", "gcloud", "--group", "com.example.shared"])
                == "/usr/bin/authkit credential gcloud --group com.example.shared")
        #expect(try SetupGCloudCommand.command(["/opt/it's/authkit", "credential", "gcloud"]) == "/opt/it's/authkit credential gcloud")
        for words in [["/opt/my tools/authkit", "credential", "gcloud"], ["/usr/bin/authkit", "credential\tgcloud"], ["a", ""]] {
            #expect(throws: Setup.Failure.self) { _ = try SetupGCloudCommand.command(words) }
        }
    }
}
