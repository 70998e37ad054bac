import AuthKitCore
import StrictJSON
import Testing

/// `LeanTokenPlan+Cargo` and `CargoCredentialText` (Sources/AuthKitCore): cargo's provider is
/// planned under the names cargo runs it by, its request read and answered as authkit's adapter
/// answers it, and everything else handed over.
@Suite struct LeanCargoPlanTests {
    static let index = "sparse+https://cargo.example/index/"

    static func request(_ index: String = index, kind: String = "get", args: [String] = []) -> CargoCredentialText.Request {
        CargoCredentialText.Request(kind: kind, indexURL: index, args: args)
    }

    static func answer(
        _ request: CargoCredentialText.Request, options: FastPathOptions = FastPathOptions(minTTL: 300), config: String? = "",
        extra: [String: String] = [:]
    ) -> LeanTokenPlan.CargoAnswer {
        LeanTokenPlan.cargoAnswer(
            request, options: options, environment: LeanTokenPlanTests.home.merging(extra) { _, new in new },
            configuration: { path in
                guard path == "/home/ada/.config/authkit/config", let config else { return nil }
                return LeanTokenPlanTests.parsed(config)
            }, storageRecord: { _ in [:] })
    }

    static func asked(group: String = "g", account: String? = nil, scopes: [String] = [], minTTL: Int = 300) -> LeanTokenPlan.CargoAnswer {
        .ask(
            AgentTokenQuery(group: group, storage: "secret-service", account: account, scopes: scopes, resources: [], minTTL: minTTL),
            socket: LeanTokenPlanTests.socket)
    }

    @Test func theProviderIsPlannedUnderTheNamesCargoRunsItBy() {
        func plan(_ program: String, _ arguments: [String], _ extra: [String: String] = [:]) -> LeanTokenPlan {
            LeanTokenPlan.make(
                arguments: arguments, program: program, environment: LeanTokenPlanTests.home.merging(extra) { _, new in new },
                configuration: { _ in nil }, storageRecord: { _ in [:] })
        }
        let plain = FastPathOptions(minTTL: 300)
        #expect(plan("authkit", ["--cargo-plugin"]) == .cargo(plain))
        #expect(plan("authkit-lean", ["--cargo-plugin"]) == .cargo(plain))
        #expect(plan("cargo-credential-authkit", ["--cargo-plugin"]) == .cargo(plain))
        var grouped = plain
        grouped.group = "g"
        #expect(plan("authkit", ["credential", "cargo", "--group", "g", "--cargo-plugin"]) == .cargo(grouped))
        #expect(plan("authkit", ["credential", "cargo"]) == .cargo(plain))
        // An action, an unknown option, a repeated flag, a variable authkit is to read: authkit's.
        for arguments in [
            ["credential", "cargo", "get"], ["credential", "cargo", "--bogus"],
            ["credential", "cargo", "--cargo-plugin", "--cargo-plugin"],
        ] {
            #expect(plan("authkit", arguments) == .handOff, "\(arguments)")
        }
        #expect(plan("other", ["--cargo-plugin"]) == .handOff)
        for variable in LeanTokenPlan.handedOffVariables {
            #expect(plan("authkit", ["--cargo-plugin"], [variable: "x"]) == .handOff, "\(variable)")
        }
    }

    @Test func aRequestIsAnsweredAsAuthkitAnswersIt() {
        let mapped = "[credential \"https://cargo.example\"]\ngroup = g\nscopes = a b\n"
        #expect(Self.answer(Self.request(), config: mapped) == Self.asked(scopes: ["a", "b"]))
        // The request's options over the command line's, after the `credential cargo` naming the subcommand.
        #expect(
            Self.answer(Self.request(args: ["credential", "cargo", "--group", "g", "--account", "ada", "--min-ttl", "900"]))
                == Self.asked(account: "ada", minTTL: 900))
        var options = FastPathOptions(minTTL: 300)
        options.group = "g"
        #expect(Self.answer(Self.request("sparse+https://any.example/i/"), options: options) == Self.asked())
        #expect(Self.answer(Self.request(args: ["--scope", "x"]), options: options) == Self.asked(scopes: ["x"]))
        #expect(Self.answer(Self.request("sparse+http://127.0.0.1:8080/index/"), options: options) == Self.asked())
        // Nothing maps it; login and logout never reach the sign-in.
        #expect(Self.answer(Self.request("sparse+https://other.example/index/"), config: mapped) == .refused(kind: "url-not-supported"))
        for kind in ["login", "logout", "future"] {
            #expect(Self.answer(Self.request(kind: kind), options: options) == .refused(kind: "operation-not-supported"), "\(kind)")
        }
        // What authkit judges or explains.
        for request in [
            Self.request(args: ["--bogus"]), Self.request(args: ["--group"]), Self.request("sparse+http://cargo.example/index/"),
            Self.request("ssh://git@cargo.example/index"), Self.request("sparse+https://u@cargo.example/index/"),
            Self.request("sparse+https://cargo.example/index/?q"), Self.request("sparse+HTTPS://cargo.example/index/"),
        ] {
            #expect(Self.answer(request, options: options) == .handOff, "\(request)")
        }
        #expect(Self.answer(Self.request(), config: nil) == .handOff)
        #expect(
            Self.answer(Self.request(), config: mapped + "resource = https://r.example/\n")
                == .ask(
                    AgentTokenQuery(
                        group: "g", storage: "secret-service", account: nil, scopes: ["a", "b"], resources: ["https://r.example/"],
                        minTTL: 300),
                    socket: LeanTokenPlanTests.socket))
        #expect(
            Self.answer(Self.request(args: ["--resource", "https://other.example/"]), config: mapped + "resource = https://r.example/\n")
                == .handOff)
    }

    @Test func theProtocolsTextIsOneLineEach() throws {
        let line = #"{"v":1,"kind":"get","operation":"read","registry":{"index-url":"sparse+https://c.example/i/"},"args":["--group","g"]}"#
        #expect(try CargoCredentialText.Request(parsing: line) == Self.request("sparse+https://c.example/i/", args: ["--group", "g"]))
        for (text, problem) in [
            ("nope", nil), ("[1]", CargoCredentialText.Problem.notObject),
            (#"{"v":2,"kind":"get","registry":{"index-url":"x"}}"#, .version),
            (#"{"v":1,"registry":{"index-url":"x"}}"#, .incomplete), (#"{"v":1,"kind":"get"}"#, .incomplete),
        ] {
            #expect {
                try CargoCredentialText.Request(parsing: text)
            } throws: { error in
                guard let problem else { if case .notJSON = error as? CargoCredentialText.Problem { return true } else { return false } }
                return error as? CargoCredentialText.Problem == problem
            }
        }
        #expect(CargoCredentialText.fetchedURL("sparse+https://c.example/i/") == "https://c.example/i/")
        let answer = CargoCredentialText.answer(token: "t", expiration: 42)
        #expect(answer.hasSuffix("}\n") && answer.filter { $0 == "\n" }.count == 1)
        let ok = try #require(try JSONValue(parsing: answer)["Ok"])
        #expect(ok["token"]?.stringValue == "Bearer t" && ok["expiration"]?.int64Value == 42 && ok["cache"]?.stringValue == "expires")
        #expect(ok["kind"]?.stringValue == "get" && ok["operation_independent"] == .bool(true))
        #expect(CargoCredentialText.error(kind: "url-not-supported") == #"{"Err":{"kind":"url-not-supported"}}"# + "\n")
        #expect(CargoCredentialText.expiration(expiresAt: 1000, minTTL: 300) == 940)
        #expect(CargoCredentialText.expiration(expiresAt: 1000, minTTL: 10) == 990)
        #expect(CargoCredentialText.expiration(expiresAt: Int.min, minTTL: 300) == Int.min)
        // Only the process the lean client was takes its hello as said.
        #expect(LeanTokenPlan.greeted("4242", pid: 4242))
        #expect(
            !LeanTokenPlan.greeted("4243", pid: 4242) && !LeanTokenPlan.greeted(nil, pid: 4242) && !LeanTokenPlan.greeted("", pid: 4242))
    }
}
