import Foundation
import TestSupport
import Testing

/// `authkit status`, text and `--json`, and its exit codes: 0 signed in and usable, 1 not
/// signed in or login needed, 3 token store unavailable.
@Suite struct StatusCommandTests {
    /// The documented `status --json` shape (README, "status --json"): path → JSON type(s).
    static let schema: [String: Set<String>] = [
        "group": ["string"], "signed_in": ["bool", "null"], "usable": ["bool"], "accounts": ["array"], "error": ["string", "null"],
        "accounts[].account": ["string"], "accounts[].name": ["string", "null"], "accounts[].issuer": ["string"],
        "accounts[].tenant_id": ["string", "null"], "accounts[].client_id": ["string"], "accounts[].scopes": ["array"],
        "accounts[].access_token_expires_at": ["string", "null"], "accounts[].access_token_expires_in": ["number", "null"],
        "accounts[].access_token_valid": ["bool"], "accounts[].refresh_token": ["bool"],
        "accounts[].token_type": ["string"], "accounts[].dpop_key": ["string", "null"],
        "accounts[].id_token_verified_at": ["string", "null"], "accounts[].usable": ["bool"], "accounts[].storage": ["object"],
        "accounts[].problem": ["string", "null"], "accounts[].refresh_problem": ["string", "null"],
        "accounts[].storage.kind": ["string"], "accounts[].storage.collection": ["string", "null"],
        "accounts[].storage.group_collection": ["bool", "null"], "accounts[].storage.locked": ["bool", "null"],
        "accounts[].storage.path": ["string", "null"], "accounts[].storage.encrypted": ["bool"],
        "accounts[].storage.keyring": ["number", "null"], "accounts[].storage.expiry_seconds": ["number", "null"],
        "accounts[].storage.memory_only": ["bool"],
    ]

    /// Every member path of a status report with its JSON type.
    static func paths(_ json: PeerJSON, prefix: String = "") -> [String: String] {
        var found: [String: String] = [:]
        for (key, value) in json.object {
            let path = prefix + key
            found[path] = kind(value)
            if case .object = value { found.merge(paths(value, prefix: path + ".")) { a, _ in a } }
            if case .array(let elements) = value {
                for element in elements {
                    if case .object = element { found.merge(paths(element, prefix: path + "[].")) { a, _ in a } }
                }
            }
        }
        return found
    }

    static func kind(_ value: PeerJSON) -> String {
        switch value {
        case .null: "null"
        case .bool: "bool"
        case .number: "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }

    static func checkSchema(_ json: PeerJSON, sourceLocation: SourceLocation = #_sourceLocation) {
        let found = paths(json)
        for (path, type) in found {
            #expect(schema[path]?.contains(type) == true, "\(path) is \(type), not as documented", sourceLocation: sourceLocation)
        }
        let expected = json["accounts"].array.isEmpty ? Set(schema.keys.filter { !$0.hasPrefix("accounts[]") }) : Set(schema.keys)
        #expect(Set(found.keys) == expected, "missing: \(expected.subtracting(found.keys).sorted())", sourceLocation: sourceLocation)
    }

    @Test(arguments: CLIHarness.Storage.allCases)
    func nobodySignedInExitsOne(storage: CLIHarness.Storage) async throws {
        let world = try await CLIHarness.start(storage: storage)
        defer { world.stop() }
        let text = try await world.authkit(["status", "--group", world.group])
        #expect(text.status == 1)
        #expect(text.stdout == "Nobody is signed in in the group \(world.group).\n")
        #expect(text.stderr == "hint: run `authkit login --group \(world.group)` to sign in\n")

        let json = try await world.authkit(["status", "--group", world.group, "--json"])
        #expect(json.status == 1)
        let report = try PeerJSON(data: Data(json.stdout.utf8))
        Self.checkSchema(report)
        #expect(report["group"] == .string(world.group))
        #expect(report["signed_in"] == .bool(false))
        #expect(report["usable"] == .bool(false))
        #expect(report["error"] == .null)
    }

    /// A plain `status` in the default group names the other groups holding a sign-in — in
    /// the Secret Service and in the kernel keyring a login recorded — and `--group` narrows.
    @Test func aPlainStatusNamesTheOtherGroupsThatHoldASignIn() async throws {
        let world = try await CLIHarness.start()
        defer { world.stop() }
        try await world.signIn()
        let kernelGroup = "com.example.kernel-\(UInt32.random(in: 0...UInt32.max))"
        defer { Keyctl.removeGroup(kernelGroup) }
        let login = try await world.authkit(
            [
                "login", "--issuer", world.provider.issuer.absoluteString, "--client-id", CLIHarness.clientID, "--group", kernelGroup,
                "--storage", "kernel-keyring",
            ], environment: world.browserEnvironment(user: "ada"), timeout: 60)
        #expect(login.status == 0, "\(login.stderr)")

        let plain = try await world.authkit(["status"])
        #expect(plain.status == 1, "nobody in the default group")
        #expect(plain.stdout.hasPrefix("Nobody is signed in in the group authkit.\n"), "\(plain.stdout)")
        let others = [world.group, kernelGroup].sorted().joined(separator: ", ")
        #expect(plain.stdout.contains("Also signed in: the groups \(others) (`authkit status --group "), "\(plain.stdout)")
        let narrowed = try await world.authkit(["status", "--group", "authkit"])
        #expect(!narrowed.stdout.contains("Also signed in"), "\(narrowed.stdout)")
        // The kernel keyring outlives the test: signed out here (the logout forgets the record).
        #expect(try await world.authkit(["logout", "--group", kernelGroup]).status == 0)
        #expect(!(try await world.authkit(["status"])).stdout.contains(kernelGroup))
        try await world.assertNoSecretsLeaked()
    }

    @Test func signedInShowsWhoWhereAndHowLongExitsZero() async throws {
        let world = try await CLIHarness.start(graph: true)
        defer { world.stop() }
        try await world.signIn(user: "ada")
        let before = try await world.provider.log().total

        let text = try await world.authkit(["status", "--group", world.group])
        #expect(text.status == 0, "\(text.stderr)")
        #expect(text.stderr.isEmpty)
        let expected = [
            "Group \(world.group)",
            "  Signed in as Ada Lovelace (ada@example.test)",
            "    issuer:         \(world.provider.issuer.absoluteString)",
            "    client:         \(CLIHarness.clientID)",
            "    scopes:         openid profile offline_access User.ReadBasic.All",
            "    access token:   expires in 59 min",
            "    refresh token:  present",
            "    id_token:       signature and claims verified ",
        ]
        let lines = CLIOutput.lines(text.stdout)
        // The last two depend on the clock ("in 59 min", "just now" or "12 s ago" on a busy machine).
        for (index, line) in expected.enumerated() where index < lines.count {
            if line.hasSuffix("59 min") {
                #expect(lines[index].hasPrefix("    access token:   expires in "), "\(lines[index])")
            } else if line.hasSuffix(" ") {
                #expect(
                    lines[index].hasPrefix(line) && (lines[index].hasSuffix("just now") || lines[index].hasSuffix(" ago")),
                    "\(lines[index])")
            } else {
                #expect(lines[index] == line)
            }
        }
        #expect(lines.count == expected.count + 1)
        #expect(lines.last?.hasPrefix("    storage:        ") == true)
        #expect(lines.last?.contains("'Login'") == true, "the collection is named: \(lines.last ?? "")")

        let json = try await world.authkit(["status", "--group", world.group, "--json"])
        #expect(json.status == 0, "\(json.stderr)")
        let report = try PeerJSON(data: Data(json.stdout.utf8))
        Self.checkSchema(report)
        #expect(report["signed_in"] == .bool(true))
        #expect(report["usable"] == .bool(true))
        let account = report["accounts"][0]
        #expect(account["account"] == .string("ada@example.test"))
        #expect(account["name"] == .string("Ada Lovelace"))
        #expect(account["issuer"] == .string(world.provider.issuer.absoluteString))
        #expect(account["scopes"].array.compactMap(\.string) == ["openid", "profile", "offline_access", "User.ReadBasic.All"])
        #expect((1800...3600).contains(account["access_token_expires_in"].int ?? 0), "seconds, of the hour the provider grants")
        #expect(account["access_token_valid"] == .bool(true))
        #expect(account["refresh_token"] == .bool(true))
        #expect(account["storage"]["kind"] == .string("secret-service"))
        #expect(account["storage"]["encrypted"] == .bool(true))
        #expect(account["storage"]["locked"] == .bool(false))
        #expect(account["storage"]["collection"] == .string("Login"))
        #expect(account["access_token_expires_at"].string?.hasSuffix("Z") == true, "RFC 3339 in UTC")

        // status reads the token store only: no discovery, no keys, no refresh.
        #expect(try await world.provider.log().total == before)
        try await world.assertNoSecretsLeaked()
    }

    @Test(arguments: CLIHarness.Storage.allCases)
    func expiredAccessTokenWithRefreshTokenIsStillUsable(storage: CLIHarness.Storage) async throws {
        let world = try await CLIHarness.start(storage: storage)
        defer { world.stop() }
        try await world.provider.configure(["access_token_ttl": 1])
        try await world.signIn()
        try await Task.sleep(for: .seconds(2))
        let text = try await world.authkit(["status", "--group", world.group])
        #expect(text.status == 0, "refreshable is usable: \(text.stdout)\(text.stderr)")
        #expect(text.stdout.contains("    access token:   expired "))
        let json = try PeerJSON(data: Data(try await world.authkit(["status", "--group", world.group, "--json"]).stdout.utf8))
        #expect(json["accounts"][0]["access_token_valid"] == .bool(false))
        #expect(json["accounts"][0]["access_token_expires_in"] == .number(0))
        #expect(json["accounts"][0]["usable"] == .bool(true))
        try await world.assertNoSecretsLeaked()
    }

    @Test func expiredWithoutRefreshTokenNeedsLoginExitsOne() async throws {
        let world = try await CLIHarness.start()
        defer { world.stop() }
        try await world.provider.configure(["access_token_ttl": 1])
        try await world.provider.setFault(.patchJSON("token", ["refresh_token": .null]))
        try await world.signIn()
        try await Task.sleep(for: .seconds(2))
        let text = try await world.authkit(["status", "--group", world.group])
        #expect(text.status == 1, "\(text.stdout)\(text.stderr)")
        #expect(text.stdout.contains("  x Signed in as Ada Lovelace (ada@example.test)"), "ASCII off a terminal")
        #expect(text.stdout.contains("    refresh token:  absent"))
        let json = try await world.authkit(["status", "--group", world.group, "--json"])
        #expect(json.status == 1)
        let report = try PeerJSON(data: Data(json.stdout.utf8))
        Self.checkSchema(report)
        #expect(report["signed_in"] == .bool(true))
        #expect(report["usable"] == .bool(false))
        #expect(report["accounts"][0]["refresh_token"] == .bool(false))
        try await world.assertNoSecretsLeaked()
    }

    @Test func noSessionBusExitsThreeWithTheDBusExplanation() async throws {
        let home = try TestPaths.makeTemporaryDirectory(prefix: "authkit-nobus")
        defer { try? FileManager.default.removeItem(at: home) }
        let environment = [
            "HOME": home.path, "PATH": "/usr/bin:/bin", "XDG_RUNTIME_DIR": home.path,
            "DBUS_SESSION_BUS_ADDRESS": "unix:path=\(home.path)/no-bus-here",
        ]
        let text = try await offThePool {
            try ProcessRunner.run(TestPaths.product("authkit"), ["status"], environment: environment, timeout: 30)
        }
        #expect(text.status == 3, "\(text.stderr)")
        #expect(text.stdout.isEmpty)
        #expect(text.stderr.contains("no D-Bus session bus"))
        #expect(text.stderr.contains("dbus-run-session"), "it says how to get one")
        #expect(text.stderr.contains("--insecure-storage"))

        let noAddress = environment.filter { $0.key != "DBUS_SESSION_BUS_ADDRESS" }
        let json = try await offThePool {
            try ProcessRunner.run(TestPaths.product("authkit"), ["status", "--json"], environment: noAddress, timeout: 30)
        }
        #expect(json.status == 3, "\(json.stderr)")
        let report = try PeerJSON(data: Data(json.stdout.utf8))
        Self.checkSchema(report)
        #expect(report["group"] == .string("authkit"))
        #expect(report["signed_in"] == .null, "unknown: the store could not be read")
        #expect(report["error"].string?.contains("no D-Bus session bus") == true)
        #expect(json.stderr.contains("no D-Bus session bus"))

        let token = try await offThePool {
            try ProcessRunner.run(TestPaths.product("authkit"), ["token"], environment: environment, timeout: 30)
        }
        #expect(token.status == 3)
        #expect(token.stdout.isEmpty)
    }

    @Test func noSecretServiceOnTheBusExitsThree() async throws {
        let bus = try await offThePool { try PrivateSecretService(provider: .none) }
        defer { bus.stop() }
        let result = try await offThePool {
            try ProcessRunner.run(TestPaths.product("authkit"), ["status"], environment: bus.environment, timeout: 30)
        }
        #expect(result.status == 3, "\(result.stderr)")
        #expect(result.stderr.contains("Secret Service"), "\(result.stderr)")
    }

    @Test func lockedKeyringExitsThree() async throws {
        let world = try await CLIHarness.start()
        defer { world.stop() }
        try await world.signIn()
        try await offThePool { try world.keyring.lockCollection(label: "Login") }
        // No display, so no unlock prompt can be shown: the store is unavailable, and says why.
        let text = try await world.authkit(["status", "--group", world.group])
        #expect(text.status == 3, "\(text.stdout)\(text.stderr)")
        #expect(text.stderr.contains("'Login' is locked"), "\(text.stderr)")
        #expect(text.stderr.contains("unlock it"), "\(text.stderr)")
        let json = try await world.authkit(["status", "--group", world.group, "--json"])
        #expect(json.status == 3)
        let report = try PeerJSON(data: Data(json.stdout.utf8))
        Self.checkSchema(report)
        #expect(report["signed_in"] == .null)
        #expect(report["error"].string?.contains("locked") == true)
        let token = try await world.authkit(["token", "--group", world.group])
        #expect(token.status == 3, "\(token.stderr)")
        #expect(token.stdout.isEmpty)
        try await world.assertNoSecretsLeaked()
    }

    @Test func readmeDocumentsEveryJSONField() throws {
        let readme = try String(contentsOf: TestPaths.packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
        let section = try #require(
            readme.components(separatedBy: "### `status --json`").dropFirst().first?.components(separatedBy: "\n#").first,
            "README has no \"### `status --json`\" section")
        var documented: Set<String> = []
        for line in section.split(separator: "\n") where line.hasPrefix("| `") {
            let cell = line.dropFirst(3)
            if let end = cell.firstIndex(of: "`") { documented.insert(String(cell[..<end])) }
        }
        #expect(documented == Set(Self.schema.keys), "README vs emitted: \(documented.symmetricDifference(Self.schema.keys).sorted())")
    }
}
