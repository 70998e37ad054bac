import AuthKitCore
import Foundation
import Testing
import TestSupport
@testable import AuthKit

@Suite("Configuration")
struct ProfileResolverTests {
    let sample = """
        # authkit configuration
        [defaults]
        profile = work
        group = com.example.shared

        [profile work]
        issuer = https://login.microsoftonline.com/{tenantid}/v2.0   # Entra, any tenant
        tenant = organizations
        client_id = "6731de76-14a6-49ae-97bc-6eba6914391e"
        scopes = openid profile offline_access User.Read

        [profile.keycloak]
        issuer = "http://127.0.0.1:8080/realms/dev"
        client_id = cli
        group = org.example.dev
        storage = plain-file
        """

    func resolver(_ text: String? = nil, environment: [String: String] = [:]) throws -> ProfileResolver {
        ProfileResolver(file: try ConfigFile.parse(text ?? sample, path: "/home/ada/.config/authkit/config"), environment: environment)
    }

    @Test("the default profile comes from [defaults], groups from [defaults] unless the profile sets one")
    func defaults() throws {
        let work = try resolver().resolve()
        #expect(work.name == "work")
        #expect(work.issuer == "https://login.microsoftonline.com/{tenantid}/v2.0")
        #expect(work.tenant == "organizations")
        #expect(work.clientID == "6731de76-14a6-49ae-97bc-6eba6914391e")
        #expect(work.scopes == ["openid", "profile", "offline_access", "User.Read"])
        #expect(work.group == "com.example.shared")
        #expect(work.sources["group"] == "/home/ada/.config/authkit/config:4")
        #expect(work.sources["client_id"] == "/home/ada/.config/authkit/config:9")

        let keycloak = try resolver().resolve(ProfileOverrides(profile: "keycloak"))
        #expect(keycloak.group == "org.example.dev")
        #expect(keycloak.storage == .plainFile)
    }

    /// A file written on Windows (CRLF), or with some lines so: each line is still one line,
    /// its comment hiding nothing after it (Swift keeps "\r\n" as one Character).
    @Test("CRLF and lone CR line ends read as LF ones, whole file or some lines")
    func windowsLineEnds() throws {
        let lf = try ConfigFile.parse(sample, path: "/c")
        for text in [
            sample.replacingOccurrences(of: "\n", with: "\r\n"),
            sample.replacingOccurrences(of: "configuration\n", with: "configuration\r\n"),
            sample.replacingOccurrences(of: "configuration\n", with: "configuration\r"),
        ] {
            let crlf = try ConfigFile.parse(text, path: "/c")
            #expect(crlf.profiles.keys.sorted() == lf.profiles.keys.sorted() && crlf.defaults?.entries == lf.defaults?.entries)
            let work = try ProfileResolver(file: crlf, environment: [:]).resolve()
            #expect(work.group == "com.example.shared" && work.clientID == "6731de76-14a6-49ae-97bc-6eba6914391e")
            #expect(work.sources["group"] == "/c:4")
        }
    }

    /// git runs a helper in the repository: a relative HOME must not make the repository's
    /// `.config/authkit/config` the user's.
    @Test("the file is found from an absolute HOME or XDG_CONFIG_HOME only")
    func location() {
        #expect(ConfigFile.location(environment: ["HOME": "/home/ada"]) == "/home/ada/.config/authkit/config")
        #expect(ConfigFile.location(environment: ["HOME": "/home/ada", "XDG_CONFIG_HOME": "/x"]) == "/x/authkit/config")
        #expect(ConfigFile.location(environment: ["HOME": "/home/ada", "XDG_CONFIG_HOME": "x"]) == "/home/ada/.config/authkit/config")
        for home in [".", "repo", ""] {
            let path = ConfigFile.location(environment: ["HOME": home])
            #expect(path.hasPrefix("/") && path.hasSuffix("/.config/authkit/config"), "\(home): \(path)")
            // The same for the state file that records each group's store.
            let state = GroupStateFile.path("storage", environment: ["HOME": home])
            #expect(state.hasPrefix("/") && state.hasSuffix("/.local/state/authkit/storage"), "\(home): \(state)")
        }
    }

    @Test("flags beat environment, environment beats the file; --scope adds; openid is always there")
    func precedence() throws {
        let environment = ["AUTHKIT_CLIENT_ID": "from-env", "AUTHKIT_GROUP": "env.group", "AUTHKIT_SCOPES": "User.Read"]
        let profile = try resolver(environment: environment).resolve(
            ProfileOverrides(clientID: "from-flag", extraScopes: ["User.ReadBasic.All", "User.Read"]))
        #expect(profile.clientID == "from-flag")
        #expect(profile.sources["client_id"] == "--client-id")
        #expect(profile.group == "env.group")
        #expect(profile.sources["group"] == "environment variable AUTHKIT_GROUP")
        #expect(profile.scopes == ["openid", "User.Read", "User.ReadBasic.All"])
    }

    @Test("no configuration at all: flags alone make a sign-in possible")
    func noConfiguration() throws {
        let profile = try ProfileResolver(file: ConfigFile(path: "/nowhere", defaults: nil, profiles: [:]), environment: [:])
            .resolve(ProfileOverrides(issuer: "https://idp.example", clientID: "c"))
        #expect(profile.issuer == "https://idp.example")
        #expect(profile.group == "authkit")
        #expect(profile.scopes == ["openid", "profile", "offline_access"])
        #expect(profile.storage == .secretService)
    }

    @Test("the built-in microsoft profile needs only a client id")
    func builtInMicrosoft() throws {
        let profile = try ProfileResolver(
            file: ConfigFile(path: "/nowhere", defaults: nil, profiles: [:]), environment: ["AUTHKIT_CLIENT_ID": "abc"]
        )
        .resolve(ProfileOverrides(profile: "microsoft"))
        #expect(profile.issuer == "https://login.microsoftonline.com/{tenantid}/v2.0")
        #expect(profile.tenant == "common")
        #expect(profile.graphBaseURL == "https://graph.microsoft.com/v1.0")
        #expect(profile.scopes == ["openid", "profile", "offline_access", "User.Read", "User.ReadBasic.All"])
        #expect(profile.redirectHost == .localhost)
        #expect(profile.clientID == "abc")
    }

    @Test("the client secret comes from the environment or the file, and is never shown")
    func clientSecret() throws {
        let profile = try resolver(environment: ["AUTHKIT_CLIENT_SECRET": "hunter2"]).resolve()
        #expect(profile.clientSecret?.value == "hunter2")
        #expect(!"\(profile)".contains("hunter2"))
    }

    @Test(
        "errors name the file, the line, the key and the problem",
        arguments: [
            ("[profile work]\nclientid = x", ":2: ‘clientid’: unknown key (did you mean client_id?)"),
            ("issuer = https://x", ":1: ‘issuer’: a key outside any section"),
            ("[profile work]\nissuer = http://idp.example", "‘issuer’: "),
            ("[profile work]\ngroup = has space", "‘group’: ‘has space’ is not a valid group"),
            ("[profile work]\nstorage = cloud", "‘storage’: use secret-service, kernel-keyring, plain-file or encrypted-file"),
            ("[profile work]\nissuer = \"https://x", "the quoted value is not closed"),
            ("[profile work]\nissuer = https://a\nissuer = https://b", ":3: ‘issuer’: set twice"),
            ("[profiles]\n", ":1: unknown section [profiles]"),
            ("[profile work\n", ":1: a section header must end with ]"),
            ("[profile work]\njust text", ":2: expected key = value"),
            // A secret pasted on its own line, or typed with a colon, is never echoed.
            ("[profile work]\nclient_secret =\nc2VjcmV0LXZhbHVl==", ":3: an unknown key (not repeated here)"),
            ("[profile work]\nclient_secret =\nc2Vj/cmV0+LXZh==", ":3: this line is not key = value"),
            ("[profile work]\nclient-id = x", ":2: ‘client-id’: unknown key (did you mean client_id?)"),
            ("[profile work]\nCLIENT_ID = x", ":2: ‘CLIENT_ID’: unknown key (did you mean client_id?)"),
            // Before any section too.
            ("c2VjcmV0LXZhbHVl==\n[profile work]", ":1: a key outside any section"),
            ("[profile work]\nclient_secret: abc==", ":2: this line is not key = value"),
            ("[profile work]\nclient_secret =\nabcdef0123==", ":3: an unknown key (not repeated here)"),
            // git's answer is lines: a user name with a line break would add one.
            ("[credential \"https://x.example\"]\nusername = \"a\\npassword=b\"", ":2: ‘username’: a user name is one line"),
        ])
    func errors(_ text: String, _ expected: String) {
        do {
            _ = try resolver(text).resolve(ProfileOverrides(profile: "work"))
            Issue.record("accepted: \(text)")
        } catch {
            #expect("\(error)".contains("/home/ada/.config/authkit/config"))
            #expect("\(error)".contains(expected), "\(error)")
            #expect(!"\(error)".contains("c2VjcmV0") && !"\(error)".contains("abc"), "\(error)")
        }
    }

    @Test("an unknown profile lists the known ones")
    func unknownProfile() {
        #expect(throws: ConfigurationError.self) { _ = try resolver().resolve(ProfileOverrides(profile: "nope")) }
        do { _ = try resolver().resolve(ProfileOverrides(profile: "nope")) } catch {
            #expect("\(error)" == "--profile: ‘profile’: there is no profile ‘nope’ (known: keycloak, microsoft, work)")
        }
    }

    @Test("a client secret in a file others can read is refused; a missing default file is fine")
    func filePermissions() throws {
        let directory = try TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("config").path
        try "[profile p]\nclient_secret = s3cret\n".write(toFile: path, atomically: false, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: path)
        #expect(throws: ConfigurationError.self) { _ = try ConfigFile.load(environment: ["AUTHKIT_CONFIG": path]) }
        do { _ = try ConfigFile.load(environment: ["AUTHKIT_CONFIG": path]) } catch {
            #expect(!error.description.contains("s3cret"))
            #expect(error.description.contains("chmod 600"))
        }
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
        #expect(try ConfigFile.load(environment: ["AUTHKIT_CONFIG": path]).profiles["p"] != nil)

        let missing = try ConfigFile.load(environment: ["XDG_CONFIG_HOME": directory.appendingPathComponent("none").path])
        #expect(missing.profiles.isEmpty)
        #expect(throws: ConfigurationError.self) {
            _ = try ConfigFile.load(environment: ["AUTHKIT_CONFIG": directory.appendingPathComponent("none").path])
        }
    }
}
