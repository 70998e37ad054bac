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
            arguments: arguments, environment: environment, configuration: { $0 == config ? Self.file(exists) : nil },
            storageRecord: { $0 == state ? record : [:] })
    }

    /// A configuration file as the lean client reads it: none (`false`), one with a problem to
    /// warn of (`true`), or one authkit would refuse (`nil`).
    static func file(_ exists: Bool?) -> ConfigFile? {
        switch exists {
        case false?: return ConfigFile(path: "/home/ada/.config/authkit/config", defaults: nil, profiles: [:])
        case true?: return parsed("[profile broken]\nbogus = 1\n")
        case nil: return nil
        }
    }

    /// `text` parsed as the lean client parses it; nil where it is refused.
    static func parsed(_ text: String) -> ConfigFile? {
        try? ConfigFile.parse(text, path: "/home/ada/.config/authkit/config", rules: .leanClient)
    }

    static func ask(
        group: String = "authkit", storage: String = "secret-service", account: String? = nil, scopes: [String] = [],
        resources: [String] = [], minTTL: Int = 60, socket: String? = socket
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
            ["token", "--exchange"], ["credential", "git", "erase"],
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

    @Test func theConfigurationFileNamesTheGroupAndStoreAsAuthkitWould() {
        func plan(_ text: String, _ arguments: [String] = ["token"], _ more: [String: String] = [:]) -> LeanTokenPlan {
            LeanTokenPlan.make(
                arguments: arguments, environment: Self.home.merging(more) { _, new in new },
                configuration: { $0 == "/home/ada/.config/authkit/config" ? Self.parsed(text) : nil }, storageRecord: { _ in [:] })
        }
        func profile(issuer: String = "https://login.example.com/{tenantid}/v2.0") -> String {
            """
            [defaults]
            profile = work
            group = com.example.d
            [profile work]
            issuer = \(issuer)
            client_id = cli
            group = com.example.w

            """
        }
        let work = profile()
        #expect(
            plan("[defaults]\ngroup = com.example.d\nstorage = kernel-keyring\n")
                == Self.ask(group: "com.example.d", storage: "kernel-keyring"))
        #expect(plan(work) == Self.ask(group: "com.example.w"))
        #expect(plan(work, ["token", "--group", "com.example.f"]) == Self.ask(group: "com.example.f"))
        #expect(plan(work, ["token"], ["AUTHKIT_GROUP": "com.example.e"]) == Self.ask(group: "com.example.e"))
        #expect(
            plan(work + "storage = plain-file\n", ["token", "--storage", "kernel-keyring"])
                == Self.ask(group: "com.example.w", storage: "kernel-keyring"))
        #expect(plan("[defaults]\nprofile = microsoft\n") == Self.ask())  // the built-in profile
        #expect(plan("[credential \"https://git.example\"]\nprofile = work\n[group \"authkit\"]\nconfirm = once\n") == Self.ask())
        // A group the file names is not a forward's to choose.
        #expect(
            plan("[defaults]\ngroup = com.example.d\n", ["token"], ["AUTHKIT_AGENT_SOCK": "/tmp/f.sock"])
                == Self.ask(group: "com.example.d", socket: "/tmp/f.sock"))
        #expect(plan("[defaults]\nstorage = plain-file\n", ["token"], ["AUTHKIT_AGENT_SOCK": "/tmp/f.sock"]) == .handOff)
        // What authkit refuses, or warns of, is its to say.
        for text in [
            "[defaults]\nprofile = nowhere\n", "[defaults]\nstorage = bogus\n", "[defaults]\ngroup = _x\n", "[profile other]\nbogus = 1\n",
            profile(issuer: "https://login.example.com/?x"), profile(issuer: "https://ada@login.example.com"),
            profile(issuer: "http://login.example.com"), work + "dpop = sometimes\n", work + "redirect_port = 0\n",
            "[group \"_x\"]\nconfirm = once\n", "[group \"authkit\"]\nconfirm = maybe\n", "[nonsense]\n",
        ] {
            #expect(plan(text) == .handOff, "\(text)")
        }
    }

    /// The package points a plug-in's link at the lean client only where it answers it.
    @Test func thePlugInsAnsweredAreTheOnesItAnswersUnderTheirNames() {
        for (alias, client) in LeanTokenPlan.credentialAliases {
            // (cargo passes only how it runs the plug-in; its request names the rest.)
            let plan = LeanTokenPlan.make(
                arguments: client == "cargo" ? ["--cargo-plugin"] : ["--group", "g", "get"], program: alias, environment: Self.home,
                configuration: { _ in Self.file(false) },
                storageRecord: { _ in [:] })
            #expect((plan != .handOff) == LeanTokenPlan.plugInsAnswered.contains(client), "\(alias)")
        }
        // kubectl's, which has no link: setup names the lean client in the kubeconfig.
        for client in LeanTokenPlan.plugInsAnswered where !LeanTokenPlan.credentialAliases.values.contains(client) {
            let plan = LeanTokenPlan.make(
                arguments: ["credential", client, "--group", "g"], environment: Self.home, configuration: { _ in Self.file(false) },
                storageRecord: { _ in [:] })
            #expect(plan != .handOff, "\(client)")
        }
    }

    @Test func configurationHomeAndSocketDecideToo() {
        // A configuration file, or one that cannot be looked at: authkit reads it.
        #expect(Self.plan(["token"], exists: true) == .handOff)
        #expect(Self.plan(["token"], exists: nil) == .handOff)
        // No absolute HOME: authkit asks the password database.
        #expect(Self.plan(["token"], ["XDG_RUNTIME_DIR": "/run/user/1000"]) == .handOff)
        #expect(Self.plan(["token"], ["HOME": "home", "XDG_RUNTIME_DIR": "/run/user/1000"]) == .handOff)
        // No agent to ask: authkit reads the store, and so may the lean client.
        #expect(Self.plan(["token"], ["HOME": "/home/ada"]) == Self.ask(socket: nil))
        #expect(Self.plan(["token"], Self.home.merging(["AUTHKIT_AGENT": "off"]) { $1 }) == Self.ask(socket: nil))
        #expect(Self.plan(["token"], Self.home.merging(["AUTHKIT_STORAGE": "floppy"]) { $1 }) == .handOff)
        // A named socket and no group: a forward may serve a group of its own (authkit asks it).
        #expect(Self.plan(["token"], Self.home.merging(["AUTHKIT_AGENT_SOCK": "/tmp/s.sock"]) { $1 }) == .handOff)
    }
}

/// The kubectl plug-in's plan: the access token of the plug-in's options (its `--min-ttl` 300 by
/// default) for the API server the plug-in is bound to, when that is a plain https URL.
@Suite struct LeanKubectlPlanTests {
    static let info = #"{"apiVersion":"client.authentication.k8s.io/v1","spec":{"cluster":{"server":"https://kube.example:6443"}}}"#

    static func plan(_ arguments: [String], info: String? = info, program: String = "authkit-lean") -> LeanTokenPlan {
        var environment = LeanTokenPlanTests.home
        environment["KUBERNETES_EXEC_INFO"] = info
        return LeanTokenPlan.make(
            arguments: arguments, program: program, environment: environment, configuration: { _ in LeanTokenPlanTests.file(false) },
            storageRecord: { _ in [:] })
    }

    static func kubectl(_ apiVersion: String, group: String = "g", minTTL: Int = 300) -> LeanTokenPlan {
        .kubectl(
            AgentTokenQuery(group: group, storage: "secret-service", account: nil, scopes: [], resources: [], minTTL: minTTL),
            socket: LeanTokenPlanTests.socket, apiVersion: apiVersion)
    }

    @Test func theBoundServersTokenIsAsked() {
        let bound = ["credential", "kubectl", "--group", "g", "--server", "https://KUBE.example:6443/"]
        #expect(Self.plan(bound) == Self.kubectl("client.authentication.k8s.io/v1"))
        #expect(Self.plan(bound + ["--server=https://other.example"]) == Self.kubectl("client.authentication.k8s.io/v1"))
        #expect(
            Self.plan(["credential", "kubectl", "--group", "g", "--token-type", "access-token", "--min-ttl", "60"])
                == Self.kubectl("client.authentication.k8s.io/v1", minTTL: 60))
        // Without KUBERNETES_EXEC_INFO (kubectl before 1.20): v1beta1, unbound only.
        #expect(Self.plan(["credential", "kubectl", "--group", "g"], info: nil) == Self.kubectl("client.authentication.k8s.io/v1beta1"))
        #expect(Self.plan(bound, info: nil) == .handOff)
    }

    @Test(
        "what authkit's plug-in checks or refuses is handed to it",
        arguments: [
            ["credential", "kubectl", "--group", "g", "--server", "https://other.example"],
            ["credential", "kubectl", "--group", "g", "--token-type", "id-token"],
            ["credential", "kubectl", "--group", "g", "--token-type", "access-token", "--token-type", "access-token"],
            ["credential", "kubectl", "--group", "g", "get"], ["credential", "kubectl", "--group", "g", "--bogus"],
            ["credential", "kubectl", "--group", "g", "--server"], ["credential", "git", "erase"], ["credential"],
        ])
    func handedOff(_ arguments: [String]) {
        #expect(Self.plan(arguments) == .handOff)
    }

    @Test func theExecInfoAndTheServerDecideToo() {
        let unbound = ["credential", "kubectl", "--group", "g"]
        #expect(Self.plan(unbound, info: "{") == .handOff)
        #expect(Self.plan(unbound, info: #"{"apiVersion":"client.authentication.k8s.io/v2"}"#) == .handOff)
        #expect(Self.plan(unbound, info: #"{"kind":"ExecCredential"}"#) == .handOff)
        #expect(
            Self.plan(
                unbound, info: #"{"apiVersion":"client.authentication.k8s.io/v1","spec":{"cluster":{"server":"http://kube.example"}}}"#)
                == .handOff)
        #expect(
            Self.plan(
                unbound, info: #"{"apiVersion":"client.authentication.k8s.io/v1","spec":{"cluster":{"server":"https://[::1]:6443"}}}"#)
                == .handOff)
        // Under a plug-in's own name (docker-credential-authkit …) authkit reads other arguments.
        #expect(Self.plan(unbound, program: "docker-credential-authkit") == .handOff)
        #expect(Self.plan(unbound, program: "authkit") == Self.kubectl("client.authentication.k8s.io/v1"))
    }

    @Test(
        "plain https URLs, and only those",
        arguments: [
            ("https://kube.example", true), ("https://kube.example:6443/", true), ("https://10.0.0.1:443/k8s/clusters/c-1", true),
            ("https://a-b.example/x_y~z", true), ("http://kube.example", false), ("https://", false), ("https://:443", false),
            ("https://kube.example:", false), ("https://kube.example:123456", false), ("https://user@kube.example", false),
            ("https://kube.example/?q", false), ("https://kube.example/#f", false), ("https://kube.example/%41", false),
            ("https://[::1]", false), ("HTTPS://kube.example", false), ("https://kube.example\n", false),
        ])
    func plainHTTPS(_ url: String, _ plain: Bool) {
        #expect(KubectlExecInfo.isPlainHTTPS(url) == plain)
    }
}

/// git's helper: `get` from the agent for the sign-in the command line names or the
/// configuration file maps, `store` answered with nothing, everything else authkit's.
@Suite struct LeanGitPlanTests {
    static func plan(_ arguments: [String], _ extra: [String: String] = [:]) -> LeanTokenPlan {
        LeanTokenPlan.make(
            arguments: arguments, program: "authkit", environment: LeanTokenPlanTests.home.merging(extra) { _, new in new },
            configuration: { _ in nil }, storageRecord: { _ in [:] })
    }

    static func options(group: String? = nil, profile: String? = nil, account: String? = nil, minTTL: Int = 300) -> FastPathOptions {
        var options = FastPathOptions(minTTL: minTTL)
        (options.group, options.profile, options.account) = (group, profile, account)
        return options
    }

    @Test func getIsPlannedAndStoreAnsweredWithNothing() {
        #expect(Self.plan(["credential", "git", "--group", "g", "get"]) == .gitGet(Self.options(group: "g"), username: nil))
        #expect(Self.plan(["credential", "git", "get", "--username", "ada"]) == .gitGet(Self.options(), username: "ada"))
        #expect(
            Self.plan(["credential", "git", "--profile", "p", "--account=a", "--min-ttl", "60", "get"])
                == .gitGet(Self.options(profile: "p", account: "a", minTTL: 60), username: nil))
        for arguments in [
            ["credential", "git", "store"], ["credential", "git", "--group", "g", "store"],
            ["credential", "git", "--profile", "p", "store"],
        ] {
            #expect(Self.plan(arguments) == .gitStore, "\(arguments)")
        }
        for variable in LeanTokenPlan.handedOffVariables {
            #expect(Self.plan(["credential", "git", "get"], [variable: "x"]) == .handOff, "\(variable)")
            #expect(Self.plan(["credential", "git", "store"], [variable: "x"]) == .handOff, "\(variable)")
            #expect(Self.plan(["credential", "git", "store"], [variable: ""]) == .gitStore, "\(variable)")
        }
        // Under a plug-in's own name the client passes the action alone; under another name
        // only `token` is the lean client's.
        func named(_ program: String, _ arguments: [String]) -> LeanTokenPlan {
            LeanTokenPlan.make(
                arguments: arguments, program: program, environment: LeanTokenPlanTests.home, configuration: { _ in nil },
                storageRecord: { _ in [:] })
        }
        #expect(named("git-credential-authkit", ["get"]) == .gitGet(Self.options(), username: nil))
        #expect(named("git-credential-authkit", ["credential", "git", "--group", "g", "get"]) == .handOff)
        #expect(named("docker-credential-authkit", ["get"]) == .docker(Self.options(), action: "get"))
        #expect(named("cargo-credential-authkit", ["--cargo-plugin"]) == .cargo(Self.options()))
        #expect(named("authkit-lean", ["--cargo-plugin"]) == .cargo(Self.options()))
        #expect(named("authkit", ["--cargo-plugin", "--group", "g"]) == .handOff)
        #expect(named("other", ["credential", "git", "get"]) == .handOff)
    }

    @Test(
        "what authkit's helper checks or changes is handed to it",
        arguments: [
            ["credential", "git", "--group", "g", "erase"], ["credential", "git", "--group", "g", "fetch"],
            ["credential", "git", "--group", "g"], ["credential", "git", "--group", "g", "get", "store"],
            ["credential", "git", "--group", "g", "--username", "a", "--username", "b", "get"],
            ["credential", "git", "--group", "g", "--bogus", "get"],
            ["credential", "git", "--group", "g", "--min-ttl", "-1", "get"], ["credential", "git", "--group", "g", "--server", "x", "get"],
        ])
    func handedOff(_ arguments: [String]) {
        #expect(Self.plan(arguments) == .handOff)
    }

    static let mappings = """
        [profile work]
        issuer = https://login.example.com
        client_id = cli
        group = com.example.work
        [credential "https://git.example"]
        group = com.example.m
        account = ada
        scopes = s1 s2
        username = bob
        [credential "https://work.example/team"]
        profile = work
        storage = kernel-keyring
        [credential "https://twice.example"]
        group = a
        [credential "https://twice.example/"]
        group = b

        """

    static func answer(
        _ request: String, _ options: FastPathOptions = options(), username: String? = nil, config: String? = mappings
    ) -> LeanTokenPlan.GitAnswer {
        guard let parsed = try? GitCredentialRequest(parsing: request) else { return .handOff }
        return LeanTokenPlan.gitAnswer(
            parsed, options: options, username: username, environment: LeanTokenPlanTests.home,
            configuration: { path in
                guard path == "/home/ada/.config/authkit/config" else { return nil }
                return config.flatMap(LeanTokenPlanTests.parsed)
            }, storageRecord: { _ in [:] })
    }

    static func ask(
        group: String, storage: String = "secret-service", account: String? = nil, scopes: [String] = [], resources: [String] = [],
        username: String = "oauth2"
    ) -> LeanTokenPlan.GitAnswer {
        .ask(
            AgentTokenQuery(group: group, storage: storage, account: account, scopes: scopes, resources: resources, minTTL: 300),
            socket: LeanTokenPlanTests.socket, username: username)
    }

    @Test func theCommandLinesSignInServesAnyHTTPSHost() {
        #expect(Self.answer("protocol=https\nhost=any.example\n", Self.options(group: "g")) == Self.ask(group: "g"))
        #expect(Self.answer("protocol=https\n", Self.options(group: "g"), username: "ada") == Self.ask(group: "g", username: "ada"))
        #expect(Self.answer("protocol=https\nhost=a\n", Self.options(profile: "work")) == Self.ask(group: "com.example.work"))
        #expect(Self.answer("protocol=https\nhost=a\n", Self.options(group: "g"), username: "a\nb") == .handOff)
        #expect(Self.answer("protocol=http\nhost=127.0.0.1\n", Self.options(group: "g")) == .handOff)
        #expect(Self.answer("protocol=ssh\nhost=a\n", Self.options(group: "g")) == .nothing)
        #expect(Self.answer("protocol=https\nhost=a\n", Self.options(profile: "nowhere")) == .handOff)
    }

    @Test func theConfigurationFilesMappingServesItsHostsOnly() {
        #expect(
            Self.answer("protocol=https\nhost=git.example\npath=x/y.git\n")
                == Self.ask(group: "com.example.m", account: "ada", scopes: ["s1", "s2"], username: "bob"))
        #expect(
            Self.answer("protocol=https\nhost=work.example\npath=team/x.git\n")
                == Self.ask(group: "com.example.work", storage: "kernel-keyring"))
        var insecure = Self.options()
        insecure.insecureStorage = true
        #expect(
            Self.answer("protocol=https\nhost=work.example\npath=team/x\n", insecure)
                == Self.ask(group: "com.example.work", storage: "plain-file"))
        var account = Self.options(account: "grace")
        account.scopes = ["s3"]
        #expect(
            Self.answer("protocol=https\nhost=git.example\n", account, username: "u")
                == Self.ask(group: "com.example.m", account: "grace", scopes: ["s3"], username: "u"))
        // Nothing mapped: no answer, so git asks its next helper.
        #expect(Self.answer("protocol=https\nhost=other.example\n") == .nothing)
        #expect(Self.answer("protocol=https\nhost=work.example\npath=elsewhere\n") == .nothing)
        #expect(Self.answer("protocol=https\n") == .nothing)
        #expect(Self.answer("protocol=https\nhost=other.example\n", config: "") == .nothing)
        // authkit's to say: two mappings equally specific, a resource named twice, a file it refuses.
        #expect(Self.answer("protocol=https\nhost=twice.example\n") == .handOff)
        var resource = Self.options()
        resource.resources = ["https://api.example"]
        #expect(
            Self.answer("protocol=https\nhost=git.example\n", resource)
                == Self.ask(
                    group: "com.example.m", account: "ada", scopes: ["s1", "s2"], resources: ["https://api.example"], username: "bob"))
        #expect(Self.answer("protocol=https\nhost=git.example\n", config: nil) == .handOff)
        #expect(Self.answer("protocol=https\nhost=git.example\n", config: Self.mappings + "[profile broken]\nbogus = 1\n") == .handOff)
    }
}

/// docker's helper: `get` from the agent for the sign-in the command line names or the
/// configuration file maps to the registry, `store` and `erase` answered with nothing,
/// `list` authkit's.
@Suite struct LeanDockerPlanTests {
    static func answer(
        _ input: String, _ options: FastPathOptions = LeanGitPlanTests.options(), action: String = "get",
        config: String? = "[registry \"r.example\"]\ngroup = com.example.r\nusername = bob\nstorage = kernel-keyring\n"
    ) -> LeanTokenPlan.DockerAnswer {
        LeanTokenPlan.dockerAnswer(
            input, options: options, action: action, environment: LeanTokenPlanTests.home,
            configuration: { path in path == "/home/ada/.config/authkit/config" ? config.flatMap(LeanTokenPlanTests.parsed) : nil },
            storageRecord: { _ in [:] })
    }

    static func ask(group: String, storage: String = "secret-service", server: String, username: String = "oauth2")
        -> LeanTokenPlan.DockerAnswer
    {
        .ask(
            AgentTokenQuery(group: group, storage: storage, account: nil, scopes: [], resources: [], minTTL: 300),
            socket: LeanTokenPlanTests.socket, server: server, username: username)
    }

    @Test func theActionsAreAnsweredAsAuthkitAnswersThem() {
        #expect(LeanGitPlanTests.plan(["credential", "docker", "get"]) == .docker(LeanGitPlanTests.options(), action: "get"))
        #expect(
            LeanGitPlanTests.plan(["credential", "docker", "--group", "g", "erase"])
                == .docker(LeanGitPlanTests.options(group: "g"), action: "erase"))
        #expect(LeanGitPlanTests.plan(["credential", "docker", "list"]) == .handOff)
        #expect(LeanGitPlanTests.plan(["credential", "docker", "--username", "a", "get"]) == .handOff)
        #expect(LeanGitPlanTests.plan(["credential", "docker", "get"], ["AUTHKIT_LOG": "debug"]) == .handOff)

        #expect(
            Self.answer("r.example\n") == Self.ask(group: "com.example.r", storage: "kernel-keyring", server: "r.example", username: "bob"))
        #expect(
            Self.answer(" https://R.example/v1/ \r\n")
                == Self.ask(group: "com.example.r", storage: "kernel-keyring", server: "https://R.example/v1/", username: "bob"))
        #expect(Self.answer("other.example\n") == .notFound)
        #expect(Self.answer("any.example\n", LeanGitPlanTests.options(group: "g")) == Self.ask(group: "g", server: "any.example"))
        #expect(Self.answer("\n") == .handOff)  // no registry: authkit's error
        #expect(Self.answer("r.example\n", config: nil) == .handOff)
        #expect(Self.answer("{}", action: "store") == .nothing)
        #expect(Self.answer("r.example\n", action: "erase") == .nothing)
    }
}
