import AuthKitCore
import Testing

/// `LeanTokenPlan` (Sources/AuthKitCore/LeanTokenPlan.swift): the lean client asks the agent
/// only for what authkit would ask it — the group, store, account, scopes, resources and
/// `--min-ttl` resolved as authkit resolves them without a configuration file — and hands
/// everything else to authkit.
@Suite struct LeanTokenPlanTests {
    static let home = ["HOME": "/home/ada", "XDG_RUNTIME_DIR": "/run/user/1000"]
    static let socket = "/run/user/1000/authkit/agent.sock"

    /// The plan, with a file system where only the configuration file's path (`config`) can
    /// be asked about and only the storage record's path (`state`) holds `record`: a plan that
    /// looked elsewhere would hand over, or miss the record.
    static func plan(
        _ arguments: [String], _ environment: [String: String] = home, exists: Bool? = false, record: [String: String] = [:],
        config: String = "/home/ada/.config/authkit/config", state: String = "/home/ada/.local/state/authkit/storage"
    ) -> LeanTokenPlan {
        LeanTokenPlan.make(
            arguments: arguments, environment: environment, exists: { $0 == config ? exists : nil },
            storageRecord: { $0 == state ? record : [:] })
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
        // The XDG folders, when absolute, hold the files.
        var environment = Self.home
        environment["XDG_CONFIG_HOME"] = "/cfg"
        environment["XDG_STATE_HOME"] = "/state"
        #expect(
            Self.plan(
                ["token"], environment, record: ["authkit": "kernel-keyring"], config: "/cfg/authkit/config",
                state: "/state/authkit/storage")
                == Self.ask(storage: "kernel-keyring"))
        environment["XDG_CONFIG_HOME"] = "relative"
        #expect(
            Self.plan(["token"], environment, config: "/home/ada/.config/authkit/config", state: "/state/authkit/storage") == Self.ask())
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

    /// (Which variables these are is checked against every variable authkit's sources read:
    /// LeanClientTests.)
    @Test("an environment authkit reads further is handed to it", arguments: LeanTokenPlan.handedOffVariables)
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
