import AuthKitCore
import Testing

/// `LeanTokenPlan` (Sources/AuthKitCore/LeanTokenPlan.swift): the lean client asks the agent
/// only for what authkit would ask it — the group, store, account, scopes, resources and
/// `--min-ttl` resolved as authkit resolves them without a configuration file — and hands
/// everything else to authkit.
@Suite struct LeanTokenPlanTests {
    static let home = ["HOME": "/home/ada", "XDG_RUNTIME_DIR": "/run/user/1000"]
    static let socket = "/run/user/1000/authkit/agent.sock"

    static func plan(
        _ arguments: [String], _ environment: [String: String] = home, exists: Bool? = false, record: [String: String] = [:]
    ) -> LeanTokenPlan {
        LeanTokenPlan.make(arguments: arguments, environment: environment, exists: { _ in exists }, storageRecord: { _ in record })
    }

    static func ask(
        group: String = "authkit", storage: String = "secret-service", account: String? = nil, scopes: [String] = [],
        resources: [String] = [], minTTL: Int = 60, socket: String = socket
    ) -> LeanTokenPlan {
        .ask(
            AgentTokenQuery(group: group, storage: storage, account: account, scopes: scopes, resources: resources, minTTL: minTTL),
            socket: socket)
    }

    @Test func theSignInAndTokenOptionsAreAskedForAsAuthkitWould() {
        #expect(Self.plan(["token"]) == Self.ask())
        #expect(
            Self.plan(["token", "--group", "com.example.a", "--account=ada@example.com", "--scope", "s1", "--scope=s2", "--min-ttl", "300"])
                == Self.ask(group: "com.example.a", account: "ada@example.com", scopes: ["s1", "s2"], minTTL: 300))
        #expect(Self.plan(["token", "--resource", "https://api.example.com"]) == Self.ask(resources: ["https://api.example.com"]))
        #expect(Self.plan(["token", "--storage", "kernel-keyring"]) == Self.ask(storage: "kernel-keyring"))
        #expect(Self.plan(["token", "--insecure-storage"]) == Self.ask(storage: "plain-file"))
        // An empty --group is no group (as the resolver's flags layer has it).
        #expect(Self.plan(["token", "--group="]) == Self.ask())
    }

    @Test func theEnvironmentNamesGroupStoreAccountAndSocket() {
        var environment = Self.home
        environment["AUTHKIT_GROUP"] = "com.example.b"
        environment["AUTHKIT_STORAGE"] = "kernel-keyring"
        environment["AUTHKIT_ACCOUNT"] = "bob"
        environment["AUTHKIT_AGENT_SOCK"] = "/tmp/s.sock"
        #expect(
            Self.plan(["token"], environment)
                == Self.ask(group: "com.example.b", storage: "kernel-keyring", account: "bob", socket: "/tmp/s.sock"))
        // Flags before the environment.
        #expect(
            Self.plan(["token", "--group", "g", "--storage", "plain-file", "--account", "ada"], environment)
                == Self.ask(group: "g", storage: "plain-file", account: "ada", socket: "/tmp/s.sock"))
    }

    @Test func theStorageRecordNamesTheStoreWhenNothingElseDoes() {
        #expect(Self.plan(["token"], record: ["authkit": "kernel-keyring"]) == Self.ask(storage: "kernel-keyring"))
        #expect(Self.plan(["token"], record: ["other": "kernel-keyring"]) == Self.ask())
        // A store authkit does not know: the Secret Service, as authkit reads the record.
        #expect(Self.plan(["token"], record: ["authkit": "floppy"]) == Self.ask())
        #expect(Self.plan(["token", "--storage", "plain-file"], record: ["authkit": "kernel-keyring"]) == Self.ask(storage: "plain-file"))
    }

    @Test(
        "what authkit checks, reports or looks up further is handed to it",
        arguments: [
            ["status"], [], ["token", "--help"], ["token", "--json"], ["token", "--id-token"], ["token", "--bogus"], ["token", "extra"],
            ["token", "--min-ttl", "86401"], ["token", "--min-ttl", "-1"], ["token", "--group", "a", "--group", "b"],
            ["token", "--storage", "floppy"], ["token", "--insecure-storage", "--storage", "kernel-keyring"],
            ["token", "--profile", "work"],
            ["token", "--group", "bad group"], ["token", "--group", ".hidden"], ["token", "--resource", "no-scheme"],
            ["token", "--exchange"], ["credential", "git", "get"],
        ])
    func handedOff(_ arguments: [String]) {
        #expect(Self.plan(arguments) == .handOff)
    }

    @Test(
        "an environment authkit reads further is handed to it",
        arguments: [
            "AUTHKIT_PROFILE", "AUTHKIT_CONFIG", "AUTHKIT_ISSUER", "AUTHKIT_TENANT", "AUTHKIT_CLIENT_ID", "AUTHKIT_CLIENT_SECRET",
            "AUTHKIT_SCOPES", "AUTHKIT_GRAPH_URL", "AUTHKIT_DPOP", "AUTHKIT_LOG", "AUTHKIT_FORWARD_KEY",
        ])
    func handedOffForVariable(_ variable: String) {
        var environment = Self.home
        environment[variable] = "x"
        #expect(Self.plan(["token"], environment) == .handOff)
        // Set but empty is not set, for authkit too.
        environment[variable] = ""
        #expect(Self.plan(["token"], environment) == Self.ask())
    }

    @Test func configurationHomeAndSocketDecideToo() {
        // A configuration file, or one that cannot be looked at: authkit reads it.
        #expect(Self.plan(["token"], exists: true) == .handOff)
        #expect(Self.plan(["token"], exists: nil) == .handOff)
        // No absolute HOME: authkit asks the password database.
        #expect(Self.plan(["token"], ["XDG_RUNTIME_DIR": "/run/user/1000"]) == .handOff)
        #expect(Self.plan(["token"], ["HOME": "home", "XDG_RUNTIME_DIR": "/run/user/1000"]) == .handOff)
        // No agent to ask: authkit reads the store.
        #expect(Self.plan(["token"], ["HOME": "/home/ada"]) == .handOff)
        #expect(Self.plan(["token"], Self.home.merging(["AUTHKIT_AGENT": "off"]) { $1 }) == .handOff)
        #expect(Self.plan(["token"], Self.home.merging(["AUTHKIT_STORAGE": "floppy"]) { $1 }) == .handOff)
        // A named socket and no group: a forward may serve a group of its own (authkit asks it).
        #expect(Self.plan(["token"], Self.home.merging(["AUTHKIT_AGENT_SOCK": "/tmp/s.sock"]) { $1 }) == .handOff)
    }
}
