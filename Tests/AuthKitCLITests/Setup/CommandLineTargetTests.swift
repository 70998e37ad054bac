import ArgumentParser
import Testing

@testable import AuthKitCLI

/// What `setup aws` and `setup gcloud` write into another tool's configuration names the
/// sign-in with options that must stay what they look like: a profile is a profile name, a
/// group a group name — never a line break that starts another section.
@Suite struct CommandLineTargetTests {
    static let aws = ["setup", "aws", "--aws-profile", "dev", "--role-arn", "arn:aws:iam::123456789012:role/dev"]

    @Test func theSignInIsWrittenAsTheOptionsEveryCommandTakes() throws {
        let parsed = try #require(
            try AuthKitCommand.parseAsRoot(
                Self.aws + ["--profile", "work", "--group", "com.example.shared", "--storage", "kernel-keyring"])
                as? SetupAWSCommand)
        #expect(parsed.target.words == ["--profile", "work", "--group", "com.example.shared", "--storage", "kernel-keyring"])
    }

    static let gcloud = [
        "setup", "gcloud", "--audience", "//iam.googleapis.com/projects/1/locations/global/workloadIdentityPools/p/providers/q",
    ]

    @Test func aProfileNameIsTaken() throws {
        _ = try AuthKitCommand.parseAsRoot(Self.aws + ["--profile", "work.prod-2"])
        _ = try AuthKitCommand.parseAsRoot(Self.gcloud + ["--profile", "work.prod-2"])
    }

    @Test(arguments: ["work\n[profile evil]", "a b", "", "work\"", "x;y"])
    func aProfileThatIsNoProfileNameIsRefused(profile: String) {
        #expect(throws: (any Error).self) { _ = try AuthKitCommand.parseAsRoot(Self.aws + ["--profile", profile]) }
        #expect(throws: (any Error).self) {
            _ = try AuthKitCommand.parseAsRoot(Self.gcloud + ["--profile", profile])
        }
    }
}
