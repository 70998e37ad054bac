import Foundation
import TestSupport
import Testing

/// The real AWS CLI with `credential_process = authkit credential aws …` against moto in
/// server mode, whose STS takes only the provider's live id_tokens.
@Suite struct AWSCredentialTests {
    static let role = "arn:aws:iam::123456789012:role/dev"

    /// One run against another STS (AWS_ENDPOINT_URL_STS: a test's, or a hostile one) whose
    /// credentials claim to live until 9999: believed only for the duration asked for (12 h
    /// when none was), and never handed to a later call that names another STS.
    @Test func keptCredentialsAreTheirSTSsAloneAndLiveNoLongerThanAsked() async throws {
        let world = try await CLIHarness.start()
        defer { world.stop() }
        try await world.signIn(user: "ada")
        let forever = try await offThePool {
            try AWSStandIn(acceptTokensFrom: world.provider, audience: CLIHarness.clientID, expiration: "9999-12-31T23:59:59Z")
        }
        defer { forever.stop() }
        let usual = try await offThePool { try AWSStandIn(acceptTokensFrom: world.provider, audience: CLIHarness.clientID) }
        defer { usual.stop() }
        func credentials(from sts: AWSStandIn, duration: Int?) async throws -> (key: String, expires: Date) {
            var environment = world.environment
            environment["AWS_ENDPOINT_URL_STS"] = sts.endpoint
            environment["AWS_REGION"] = "us-east-1"
            let arguments =
                ["credential", "aws", "--role-arn", Self.role, "--group", world.group]
                + (duration.map { ["--duration", String($0)] } ?? [])
            let result = try await world.authkit(arguments, environment: environment)
            try #require(result.status == 0, "\(result.stderr)")
            let document = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
            let expires = try #require((document["Expiration"] as? String).flatMap { ISO8601DateFormatter().date(from: $0) })
            return (try #require(document["AccessKeyId"] as? String), expires)
        }
        let started = Date()
        let first = try await credentials(from: forever, duration: 3600)
        #expect(first.expires <= started.addingTimeInterval(3600 + 60), "believed for the hour asked for, not until \(first.expires)")
        let other = try await credentials(from: usual, duration: 3600)
        #expect(other.key != first.key, "another STS's credentials are never reused")
        #expect(try await usual.calls().count == 1)
        let again = try await credentials(from: forever, duration: 3600)
        let foreverCalls = try await forever.calls().count
        #expect(again.key == first.key && foreverCalls == 1, "kept for their own STS")
        let longest = try await credentials(from: forever, duration: nil)
        #expect(longest.expires <= Date().addingTimeInterval(43_200 + 60), "12 hours at most when no duration is asked for")
        try await world.assertNoSecretsLeaked()
    }

    /// A region that is not a region name is refused before anything is asked or kept, an STS
    /// named by its URL included: stored under it, the credentials would outlive `logout --account`.
    @Test func aRegionThatIsNotARegionNameIsRefused() async throws {
        let world = try await CLIHarness.start()
        defer { world.stop() }
        try await world.signIn(user: "ada")
        var environment = world.environment
        environment["AWS_ENDPOINT_URL_STS"] = "http://127.0.0.1:9"
        environment["AWS_REGION"] = "eu west 1"
        let result = try await world.authkit(
            ["credential", "aws", "--role-arn", Self.role, "--group", world.group], environment: environment)
        #expect(result.status == 2 && result.stdout.isEmpty, "\(result.stderr)")
        #expect(result.stderr.split(separator: "\n").count == 1 && result.stderr.contains("is not a region name"), "\(result.stderr)")
        try await world.assertNoSecretsLeaked()
    }

    @Test(arguments: [false, true])
    func theAWSCLIGetsRoleCredentialsOnceAndSTSErrorsAreOneLine(agent: Bool) async throws {
        let aws = TestPaths.python.deletingLastPathComponent().appendingPathComponent("aws")
        try #require(FileManager.default.isExecutableFile(atPath: aws.path), "the AWS CLI is missing from .venv: run ./scripts/bootstrap")
        let world = try await CLIHarness.start(agent: agent)
        defer { world.stop() }
        try await world.provider.configure(["id_token_ttl": 30])
        try await world.signIn(user: "ada")
        try await world.provider.configure(["id_token_ttl": 3600])
        let stand = try await offThePool { try AWSStandIn(acceptTokensFrom: world.provider, audience: CLIHarness.clientID) }
        defer { stand.stop() }
        let refusing = try await offThePool { try AWSStandIn(acceptTokensFrom: world.provider, audience: "another-client") }
        defer { refusing.stop() }

        let home = world.scratch.appendingPathComponent("aws-home")
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        var environment = world.environment
        environment["HOME"] = home.path
        environment["AWS_CONFIG_FILE"] = home.path + "/config"
        environment["AWS_SHARED_CREDENTIALS_FILE"] = home.path + "/credentials"
        environment["AWS_ENDPOINT_URL"] = stand.endpoint
        environment["AWS_REGION"] = "us-east-1"
        environment["AWS_EC2_METADATA_DISABLED"] = "true"
        environment["AWS_PAGER"] = ""
        for _ in 0..<2 {
            let setup = try await world.authkit(
                ["setup", "aws", "--aws-profile", "dev", "--role-arn", Self.role, "--group", world.group], environment: environment)
            #expect(setup.status == 0, "\(setup.stderr)")
        }
        // A file that is not an AWS config (sudoers, named by a variable `sudo -E` kept) is not
        // appended to.
        let sudoers = home.path + "/sudoers"
        try "Defaults\tenv_reset\nroot\tALL=(ALL:ALL) ALL\n".write(toFile: sudoers, atomically: false, encoding: .utf8)
        let notINI = try await world.authkit(
            ["setup", "aws", "--aws-profile", "dev", "--role-arn", Self.role, "--group", world.group],
            environment: environment.merging(["AWS_CONFIG_FILE": sudoers]) { $1 })
        #expect(notINI.status == 2 && notINI.stderr.contains("(line 1); nothing was written"), "\(notINI.stderr)")
        #expect(try String(contentsOfFile: sudoers, encoding: .utf8) == "Defaults\tenv_reset\nroot\tALL=(ALL:ALL) ALL\n")
        // --profile is authkit's, as everywhere: the old spelling says which flag names AWS's.
        let old = try await world.authkit(["setup", "aws", "--profile", "dev", "--role-arn", Self.role], environment: environment)
        #expect(old.status == 2 && old.stderr.contains("--aws-profile dev"), "\(old.stderr)")
        let config = try String(contentsOfFile: home.path + "/config", encoding: .utf8)
        #expect(
            config.components(separatedBy: "[profile dev]").count == 2 && config.contains("credential aws --role-arn \(Self.role)"),
            "\(config)")
        let awsEnvironment = environment
        func run(_ arguments: [String], extra: [String: String] = [:]) async throws -> ProcessResult {
            let result = try await offThePool {
                try ProcessRunner.run(aws, arguments, environment: awsEnvironment.merging(extra) { $1 }, timeout: 120)
            }
            world.recordExternal("aws", arguments, result)
            return result
        }

        try await world.provider.clearLog()
        let make = try await run(["--profile", "dev", "s3", "mb", "s3://authkit-test"])
        #expect(make.status == 0, "aws s3 mb with the role's credentials: \(make.stderr)")
        let list = try await run(["--profile", "dev", "s3", "ls"])
        #expect(list.status == 0 && list.stdout.contains("authkit-test"), "\(list.stdout)\(list.stderr)")
        let calls = try await stand.calls()
        #expect(calls.count == 1 && calls.allSatisfy { $0.accepted && $0.role == Self.role }, "one STS call for both commands: \(calls)")
        #expect(try await world.provider.log().count(grantType: "refresh_token") == 1, "the 30-second id_token was refreshed once")

        // STS refuses (another audience): one line, naming STS's code.
        try
            "[profile other]\ncredential_process = \(TestPaths.product("authkit").path) credential aws --role-arn \(Self.role) --group \(world.group) --duration 900\n"
            .write(toFile: home.path + "/config-other", atomically: false, encoding: .utf8)
        let refusal = try await run(
            ["--profile", "other", "sts", "get-caller-identity"],
            extra: ["AWS_ENDPOINT_URL": refusing.endpoint, "AWS_CONFIG_FILE": home.path + "/config-other"])
        #expect(refusal.status != 0 && refusal.stderr.contains("authkit: AWS STS refused AssumeRoleWithWebIdentity"), "\(refusal.stderr)")
        #expect(refusal.stderr.contains("InvalidIdentityToken"))
        #expect(
            refusal.stderr.contains("must be exactly the issuer `authkit status` shows")
                && refusal.stderr.contains("its audience the client id"), "the likely mismatch and where the values are: \(refusal.stderr)")

        // The plug-in's own contract, run directly: the document on stdout, nothing else.
        let direct = try await world.authkit(
            ["credential", "aws", "--role-arn", Self.role, "--group", world.group], environment: environment)
        #expect(direct.status == 0 && direct.stderr.isEmpty, "\(direct.stderr)")
        let document = try #require(try JSONSerialization.jsonObject(with: Data(direct.stdout.utf8)) as? [String: Any])
        #expect(Set(document.keys) == ["Version", "AccessKeyId", "SecretAccessKey", "SessionToken", "Expiration"])
        #expect(try await stand.calls().count == 1, "still the one STS call: the credentials are kept in the store")

        // Signed out: the cached credentials go with the sign-in.
        #expect(try await world.authkit(["logout", "--group", world.group]).status == 0)
        let signedOut = try await run(["--profile", "dev", "s3", "ls"])
        #expect(signedOut.status != 0 && signedOut.stderr.contains("nobody is signed in"), "\(signedOut.stderr)")

        // No STS credential in any captured output but the plug-in's own answer.
        let cloud = try await stand.issued().map { LeakScanner.Secret(kind: $0.kind, value: $0.value) }
        #expect(!cloud.isEmpty)
        for finding in LeakScanner.scan(world.capturedText(), for: cloud) { Issue.record("AWS credential leaked: \(finding)") }
        try await world.assertNoSecretsLeaked()
    }
}
