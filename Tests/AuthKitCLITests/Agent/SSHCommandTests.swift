import Testing

@testable import AuthKitCLI

/// `authkit ssh`'s own reading of ssh's words: where ssh's options end, the destination and
/// the command; and its help, which ssh's passed-through words would otherwise swallow.
@Suite struct SSHCommandTests {
    typealias Home = ConfigurationErrorTests.Home

    @Test func sshsOptionsTheDestinationAndTheCommandAreTold() throws {
        let cases: [([String], ([String], String, [String])?)] = [
            (["dev"], ([], "dev", [])),
            (["dev", "git", "pull"], ([], "dev", ["git", "pull"])),
            (["-p", "2222", "me@dev", "ls", "-l"], (["-p", "2222"], "me@dev", ["ls", "-l"])),
            (["-p2222", "-v", "dev"], (["-p2222", "-v"], "dev", [])),
            (["-vp", "2222", "dev", "-x"], (["-vp", "2222"], "dev", ["-x"])),
            (["-o", "ProxyJump=bastion", "--", "dev"], (["-o", "ProxyJump=bastion", "--"], "dev", [])),
            (["-p"], nil),
            (["-v"], nil),
            ([], nil),
        ]
        for (words, expected) in cases {
            let split = SSHCommand.split(words)
            #expect(split?.0 == expected?.0 && split?.1 == expected?.1 && split?.2 == expected?.2, "\(words)")
        }
    }

    @Test func helpIsAuthkitsAndAHostIsAskedFor() async throws {
        let home = try Home()
        for flag in ["--help", "-h"] {
            let help = try await home.authkit(["ssh", flag])
            #expect(help.status == 0 && help.stdout.contains("USAGE: authkit ssh"), "\(flag): \(help.stdout)\(help.stderr)")
        }
        let none = try await home.authkit(["ssh"])
        #expect(none.status == 2 && none.stderr.contains("name the host to connect to"), "\(none.stderr)")
    }
}
