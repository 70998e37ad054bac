import Foundation
import Testing
import TestSupport

/// SecretServiceStore against a real gnome-keyring in a private D-Bus session, through
/// SecretStoreProbe (a separate program, so each scenario gets its own bus and libsecret
/// state). The other programs are secret-tool and Python (secretstorage/jeepney).
@Suite("SecretServiceStore in a private keyring")
struct SecretServiceStoreTests {
    static let group = "com.example.shared"
    static let issuer = "https://login.microsoftonline.com/9188040d-6c67-4c5b-b112-36a304b66dad/v2.0"
    static let record = #"{"access_token":"at-1","refresh_token":"rt-1","generation":1}"#

    static func key(group: String = group, account: String = "ada@contoso.com") -> [String] {
        ["--group", group, "--issuer", issuer, "--client-id", "client-1", "--account", account]
    }

    static func attributes(group: String = group, account: String = "ada@contoso.com") -> [String] {
        [
            "xdg:schema", "io.github.authkit.Token", "group", group, "issuer", issuer, "client_id", "client-1",
            "account", account, "kind", "tokens",
        ]
    }

    @discardableResult
    static func save(
        _ service: PrivateSecretService, _ secret: String = record, group: String = group,
        account: String = "ada@contoso.com", prompts: String = "unlock"
    ) throws -> [String: Any] {
        let result = try service.probe(["--prompts", prompts, "save"] + key(group: group, account: account), stdin: secret)
        #expect(result.status == 0, "save failed: \(result.stdout) \(result.stderr)")
        return try json(result)
    }

    /// The probe's last JSON line.
    static func json(_ result: ProcessResult) throws -> [String: Any] {
        let line = result.stdout.split(separator: "\n").last.map(String.init) ?? ""
        let object = try JSONSerialization.jsonObject(with: Data(line.utf8))
        return try #require(object as? [String: Any], "probe printed no JSON object: \(result.stdout) \(result.stderr)")
    }

    static func location(_ object: [String: Any]) -> [String: Any] {
        (object["location"] as? [String: Any]) ?? ((object["item"] as? [String: Any])?["location"] as? [String: Any]) ?? [:]
    }

    static func peerItems(_ service: PrivateSecretService, _ pairs: [String]) throws -> [[String: Any]] {
        let text = try service.peer(["read"] + pairs)
        return try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [[String: Any]])
    }

    @Test("an existing group collection receives the items")
    func groupCollectionPresent() throws {
        let service = try PrivateSecretService()
        defer { service.stop() }
        try service.createCollection(label: Self.group)
        let saved = try Self.save(service)
        let location = Self.location(saved)
        #expect(location["label"] as? String == Self.group)
        #expect(location["isGroupCollection"] as? Bool == true)
        #expect((location["description"] as? String)?.contains("Secret Service collection ‘com.example.shared’") == true)

        let looked = try Self.json(try service.probe(["lookup", "--show-secret"] + Self.key()))
        let item = try #require(looked["item"] as? [String: Any])
        #expect(item["secret"] as? String == Self.record)
        #expect(Self.location(looked)["isGroupCollection"] as? Bool == true)
    }

    @Test("no group collection: the default collection, which is no fallback, and nothing is created")
    func absentGroupCollectionUsesDefault() throws {
        let service = try PrivateSecretService()
        defer { service.stop() }
        let monitor = try service.monitor()
        for policy in ["never", "unlock"] {
            let location = Self.location(try Self.save(service, prompts: policy))
            #expect(location["isGroupCollection"] as? Bool == false)
            #expect(location["label"] as? String == "Login")
            #expect(location["fallbackReason"] is NSNull, "the default collection is the rule, not a fallback")
            #expect(location["description"] as? String == "Secret Service keyring ‘Login’ (encrypted)", "plain words for a person")
            let prepared = try Self.json(try service.probe(["prepare", "--prompts", policy, "--group", Self.group]))
            #expect(prepared["groupCollectionExists"] as? Bool == false)
        }
        // Found again by attributes, wherever it is.
        let looked = try service.probe(["lookup"] + Self.key())
        #expect(looked.status == 0)
        #expect(try service.collectionCount(label: Self.group) == 0)
        #expect(try monitor.count("CreateCollection") == 0, "no save or preparation asked for a collection")
        #expect(try monitor.count("Prompt") == 0)
    }

    @Test("creation asked: once per store, before the save; a failure falls back with its reason and is not asked again")
    func creationAskedOnceFallsBack() throws {
        let service = try PrivateSecretService()
        defer { service.stop() }
        try Self.save(service, group: "com.example.other")  // the login keyring a desktop has
        let monitor = try service.monitor()
        // A sign-in's order in one process: prepare (asks), then save (does not ask again).
        let result = try Self.json(
            try service.probe(["prepare-and-save", "--prompts", "create", "--prompt-timeout", "10"] + Self.key(), stdin: Self.record))
        let prepared = try #require(result["prepared"] as? [String: Any])
        let location = Self.location(result)
        #expect(prepared["label"] as? String == "Login")
        #expect((prepared["fallbackReason"] as? String)?.isEmpty == false, "the preparation says why: \(prepared)")
        #expect(location["label"] as? String == "Login")
        #expect(location["fallbackReason"] as? String == prepared["fallbackReason"] as? String, "the save keeps the reason")
        #expect(try monitor.count("CreateCollection") == 1)
        // Another store asked to create, prepared twice in one process: one request more.
        let twice = try service.probe(["--prompts", "create", "--prompt-timeout", "10", "--repeat", "2", "prepare", "--group", Self.group])
        #expect(twice.status == 0, "\(twice.stdout)")
        #expect(try monitor.count("CreateCollection") == 2)
    }

    @Test("a group's own collection without items yet is found, used and never created twice")
    func emptyGroupCollectionIsNotCreatedAgain() throws {
        let service = try PrivateSecretService()
        defer { service.stop() }
        try service.createCollection(label: Self.group)
        let monitor = try service.monitor()
        let prepared = try Self.json(try service.probe(["prepare", "--prompts", "create", "--group", Self.group]))
        #expect(prepared["groupCollectionExists"] as? Bool == true, "\(prepared)")
        #expect(Self.location(try Self.save(service, prompts: "create"))["isGroupCollection"] as? Bool == true)
        #expect(try monitor.count("CreateCollection") == 0)
        #expect(try service.collectionCount(label: Self.group) == 1)
    }

    @Test("a label with '-', '.' and '_' names one collection, reused across runs")
    func labelWithPunctuationIsReused() throws {
        let service = try PrivateSecretService()
        defer { service.stop() }
        let group = "com.example-team.shared_tools"
        try service.createCollection(label: group)
        #expect(try service.collectionCount(label: group) == 1)
        for run in 1...3 {
            let location = Self.location(try Self.save(service, "{\"run\":\(run)}", group: group))
            #expect(location["label"] as? String == group)
            #expect(location["isGroupCollection"] as? Bool == true)
        }
        #expect(try service.collectionCount(label: group) == 1)
        #expect(try Self.peerItems(service, ["group=\(group)"]).count == 1)
    }

    @Test("a locked collection is reported as locked, not as not found")
    func lockedCollection() throws {
        let service = try PrivateSecretService()
        defer { service.stop() }
        try service.createCollection(label: Self.group)
        try Self.save(service)
        try service.lockCollection(label: Self.group)

        let noPrompt = try service.probe(["lookup", "--no-prompt"] + Self.key())
        #expect(noPrompt.status == 5, "expected locked: \(noPrompt.stdout)")
        let error = try Self.json(noPrompt)
        #expect(error["error"] as? String == "locked")
        #expect((error["message"] as? String)?.contains("‘com.example.shared’ is locked") == true)

        // With prompts allowed, the headless provider cannot show one: dismissed, still not "not found".
        let prompted = try service.probe(["lookup", "--prompt-timeout", "10"] + Self.key())
        #expect(prompted.status == 6, "expected unlockDismissed: \(prompted.stdout)")
        #expect(try Self.json(prompted)["error"] as? String == "unlockDismissed")

        // Listing without secrets still shows the item, marked locked.
        let listed = try Self.json(try service.probe(["list", "--group", Self.group]))
        let items = try #require(listed["items"] as? [[String: Any]])
        #expect(items.count == 1)
        #expect((items.first?["location"] as? [String: Any])?["isLocked"] as? Bool == true)
    }

    @Test("no session bus: an explanation of what to do, not GLib's autolaunch message")
    func noSessionBus() throws {
        let directory = try TestPaths.makeTemporaryDirectory(prefix: "authkit-nobus")
        defer { try? FileManager.default.removeItem(at: directory) }
        var environment = ProcessInfo.processInfo.environment
        for name in ["DBUS_SESSION_BUS_ADDRESS", "DISPLAY", "WAYLAND_DISPLAY"] { environment.removeValue(forKey: name) }
        environment["XDG_RUNTIME_DIR"] = directory.path  // no `bus` socket in it
        environment["HOME"] = directory.path
        let result = try ProcessRunner.run(
            try PrivateSecretService.probeExecutable(), ["lookup"] + Self.key(), environment: environment, timeout: 60)
        #expect(result.status == 3, "expected noSessionBus: \(result.stdout) \(result.stderr)")
        let error = try Self.json(result)
        #expect(error["error"] as? String == "noSessionBus")
        let message = try #require(error["message"] as? String)
        #expect(message.contains("dbus-run-session"))
        #expect(message.contains("--insecure-storage"))
    }

    @Test("a bus without a Secret Service provider gives noSecretService")
    func busWithoutProvider() throws {
        let service = try PrivateSecretService(provider: .none)
        defer { service.stop() }
        let result = try service.probe(["lookup"] + Self.key())
        #expect(result.status == 4, "expected noSecretService: \(result.stdout) \(result.stderr)")
        #expect(try Self.json(result)["error"] as? String == "noSecretService")
    }

    @Test("a provider that never answers gives timedOut within the bound")
    func hungProvider() throws {
        let service = try PrivateSecretService(provider: .hung)
        defer { service.stop() }
        let bound = 1.0
        let started = Date()
        let result = try service.probe(["--timeout", "\(bound)", "lookup"] + Self.key(), timeout: 30)
        let elapsed = Date().timeIntervalSince(started)
        #expect(!result.timedOut)
        #expect(result.status == 7, "expected timedOut: \(result.stdout) \(result.stderr)")
        #expect(try Self.json(result)["error"] as? String == "timedOut")
        // Bounded, not hung: a few bounds plus the probe's start-up, which a busy suite slows (a
        // fresh-clone run took 5.28 s against the 5 s this said before).
        #expect(elapsed < 3 * bound + 8, "took \(elapsed) s for a bound of \(bound) s")
    }

    @Test("after a timeout the store fails cleanly again, within the bound")
    func hungProviderTwiceInOneProcess() throws {
        let service = try PrivateSecretService(provider: .hung)
        defer { service.stop() }
        let bound = 1.0
        let started = Date()
        let result = try service.probe(["--timeout", "\(bound)", "--repeat", "2", "lookup"] + Self.key(), timeout: 30)
        let elapsed = Date().timeIntervalSince(started)
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.count == 2)
        #expect(lines.allSatisfy { $0.contains(#""error":"timedOut""#) }, "\(result.stdout)")
        #expect(result.status == 7)
        #expect(elapsed < 2 * 3 * bound + 2, "took \(elapsed) s for two calls bounded by \(bound) s")
    }

    @Test("corrupt items are reported and left in place")
    func corruptItem() throws {
        let service = try PrivateSecretService()
        defer { service.stop() }
        // Written by another program with our schema: a secret that is not UTF-8, and one lacking `account`.
        try service.peer(["write-item", "bad secret", "fffe00"] + Self.pairs(Self.attributes()))
        try service.peer([
            "write-item", "no account", Self.hex("{}"), "xdg:schema=io.github.authkit.Token",
            "group=\(Self.group)", "issuer=\(Self.issuer)", "client_id=client-1", "kind=tokens",
        ])
        let listed = try Self.json(try service.probe(["list", "--group", Self.group, "--secrets"]))
        let items = try #require(listed["items"] as? [[String: Any]])
        #expect(items.count == 2)
        let problems = items.compactMap { $0["problem"] as? String }
        #expect(problems.count == 2)
        #expect(problems.contains { $0.contains("not UTF-8") })
        #expect(problems.contains { $0.contains("account") })
        #expect(items.allSatisfy { $0["secretBytes"] is NSNull })

        let looked = try Self.json(try service.probe(["lookup"] + Self.key()))
        #expect((looked["item"] as? [String: Any])?["problem"] is String)
        // A save of another account does not touch them.
        try Self.save(service, account: "grace@contoso.com")
        #expect(try Self.peerItems(service, ["group=\(Self.group)"]).count == 3)
    }

    @Test("two programs naming one group see one sign-in; a deletion by one is seen by the other")
    func twoProgramsShareOneSignIn() throws {
        let service = try PrivateSecretService()
        defer { service.stop() }
        try Self.save(service)
        // secret-tool (libsecret, C) finds it by the documented attributes.
        let tool = try service.secretTool(["lookup"] + Self.attributes())
        #expect(tool.status == 0)
        #expect(tool.stdout == Self.record)
        // Python (secretstorage) reads the same record.
        let items = try Self.peerItems(service, ["group=\(Self.group)"])
        #expect(items.count == 1)
        #expect(items.first?["secret"] as? String == Self.record)
        // Python deletes it; SecretStore no longer finds it.
        #expect(try service.peer(["delete", "group=\(Self.group)", "account=ada@contoso.com"]) == "1")
        let gone = try service.probe(["lookup"] + Self.key())
        #expect(gone.status == 1)
        #expect(try Self.json(gone)["found"] as? Bool == false)
        // The other way round: another program writes, SecretStore reads; SecretStore deletes, secret-tool sees it gone.
        let stored = try service.secretTool(
            ["store", "--label=by secret-tool"] + Self.attributes() + ["format", "1"],
            stdin: "{\"from\":\"secret-tool\"}")
        #expect(stored.status == 0)
        let looked = try Self.json(try service.probe(["lookup", "--show-secret"] + Self.key()))
        #expect((looked["item"] as? [String: Any])?["secret"] as? String == "{\"from\":\"secret-tool\"}")
        #expect(try service.probe(["delete"] + Self.key()).status == 0)
        #expect(try service.secretTool(["lookup"] + Self.attributes()).status != 0)
    }

    @Test("two groups never see each other's items")
    func groupsAreSeparate() throws {
        let service = try PrivateSecretService()
        defer { service.stop() }
        try Self.save(service, "{\"group\":\"a\"}", group: "com.example.a")
        try Self.save(service, "{\"group\":\"b\"}", group: "com.example.b")
        let a = try Self.json(try service.probe(["list", "--group", "com.example.a", "--secrets", "--show-secret"]))
        let aItems = try #require(a["items"] as? [[String: Any]])
        #expect(aItems.count == 1)
        #expect(aItems.first?["secret"] as? String == "{\"group\":\"a\"}")
        #expect(try service.probe(["lookup"] + Self.key(group: "com.example.c")).status == 1)
        #expect(try Self.json(try service.probe(["delete-all", "--group", "com.example.a"]))["deleted"] as? Int == 1)
        let b = try Self.json(try service.probe(["lookup", "--show-secret"] + Self.key(group: "com.example.b")))
        #expect((b["item"] as? [String: Any])?["secret"] as? String == "{\"group\":\"b\"}")
    }

    @Test("a save replaces: one item per key, even when the item moves to the group collection")
    func saveReplaces() throws {
        let service = try PrivateSecretService()
        defer { service.stop() }
        try Self.save(service, "{\"generation\":1}")  // the default collection
        try Self.save(service, "{\"generation\":2}")
        var items = try Self.peerItems(service, ["group=\(Self.group)"])
        #expect(items.count == 1)
        #expect(items.first?["secret"] as? String == "{\"generation\":2}")
        try service.createCollection(label: Self.group)
        let location = Self.location(try Self.save(service, "{\"generation\":3}"))
        #expect(location["isGroupCollection"] as? Bool == true)
        items = try Self.peerItems(service, ["group=\(Self.group)"])
        #expect(items.count == 1)
        #expect(items.first?["secret"] as? String == "{\"generation\":3}")
    }

    /// What a refresh does to the store: another program's save over the item it finds updates
    /// that item in place (`Item.SetSecret`) — no `CreateItem`, which KeePassXC 2.7.4 answers
    /// with a dialog nobody can see when the item is another program's, no prompt — and touches
    /// no other item and no collection's items (libsecret's collection proxies would load every
    /// item of every collection, and fail on one the provider lists but cannot show).
    @Test(
        "a save over an existing item updates it in place and touches nothing else",
        arguments: [
            PrivateSecretService.Provider.gnomeKeyring, .keepassxc,
        ])
    func saveUpdatesInPlace(provider: PrivateSecretService.Provider) throws {
        let service = try PrivateSecretService(provider: provider)
        defer { service.stop() }
        // Another program's item in the same collection, and a second account of ours.
        try service.peer(["write-item", "someone else's", Self.hex("other secret"), "service=other", "account=x"])
        try Self.save(service, "{\"generation\":1}", account: "grace@contoso.com")
        try Self.save(service, "{\"generation\":1}")
        let monitor = try service.monitor()
        let started = Date()
        for prompts in ["never", "unlock"] {
            try Self.save(service, "{\"generation\":2,\"prompts\":\"\(prompts)\"}", prompts: prompts)
        }
        // A prompt nobody answers holds the save until the probe is killed; a busy machine takes
        // seconds without one.
        #expect(Date().timeIntervalSince(started) < 20, "a save waited for a prompt")
        let calls = try monitor.calls()
        #expect(calls.filter { $0.member == "SetSecret" }.count == 2, "\(calls)")
        #expect(calls.filter { $0.member == "CreateItem" || $0.member == "Prompt" }.isEmpty, "\(calls)")
        let ours = try Self.peerItems(service, Self.pairs(Self.attributes()))
        #expect(ours.count == 1, "one item per key")
        #expect(ours.first?["secret"] as? String == "{\"generation\":2,\"prompts\":\"unlock\"}")
        // Only the written item's own path is touched among the items.
        let itemCalls = calls.filter { $0.path.split(separator: "/").count == 6 && $0.path.contains("/collection/") }
        #expect(Set(itemCalls.map(\.path)).count == 1, "other items were read: \(itemCalls)")
        #expect(
            !calls.contains {
                $0.member == "GetAll" && $0.arg0 == "org.freedesktop.Secret.Collection" && $0.path.hasSuffix("/aliases/default")
            })
        let looked = try Self.json(try service.probe(["lookup", "--show-secret"] + Self.key()))
        #expect((looked["item"] as? [String: Any])?["secret"] as? String == "{\"generation\":2,\"prompts\":\"unlock\"}")
        #expect(try Self.peerItems(service, ["service=other"]).first?["secret"] as? String == "other secret")
    }

    @Test("deleteAll removes every item of the group, corrupt ones included")
    func deleteAll() throws {
        let service = try PrivateSecretService()
        defer { service.stop() }
        try Self.save(service, account: "ada@contoso.com")
        try Self.save(service, account: "grace@contoso.com")
        try service.peer(["write-item", "bad secret", "fffe00"] + Self.pairs(Self.attributes(account: "eve@contoso.com")))
        let deleted = try Self.json(try service.probe(["delete-all", "--group", Self.group]))
        #expect(deleted["deleted"] as? Int == 3)
        #expect(try Self.peerItems(service, ["group=\(Self.group)"]).isEmpty)
        #expect(try service.probe(["delete"] + Self.key()).status == 1)
    }

    @Test("secret-tool search shows the documented schema and attributes")
    func secretToolSearchInterop() throws {
        let service = try PrivateSecretService()
        defer { service.stop() }
        try Self.save(service)
        let result = try service.secretTool(["search", "--all", "group", Self.group])
        #expect(result.status == 0)
        let text = result.stdout + result.stderr
        for line in [
            "schema = io.github.authkit.Token", "attribute.group = com.example.shared",
            "attribute.issuer = \(Self.issuer)", "attribute.client_id = client-1",
            "attribute.account = ada@contoso.com", "attribute.kind = tokens", "attribute.format = 1",
            "label = authkit: ada@contoso.com @ login.microsoftonline.com (com.example.shared)",
        ] {
            #expect(text.contains(line), "missing ‘\(line)’ in: \(text)")
        }
    }

    @Test("Python secretstorage reads the shared sign-in with the documented attributes")
    func pythonInterop() throws {
        let service = try PrivateSecretService()
        defer { service.stop() }
        try Self.save(service)
        let items = try Self.peerItems(service, ["xdg:schema=io.github.authkit.Token", "group=\(Self.group)"])
        let item = try #require(items.first)
        let attributes = try #require(item["attributes"] as? [String: String])
        #expect(attributes["account"] == "ada@contoso.com")
        #expect(attributes["client_id"] == "client-1")
        #expect(attributes["kind"] == "tokens")
        #expect(attributes["format"] == "1")
        #expect(item["secret"] as? String == Self.record)
    }

    @Test("status names the collection, the provider and the item count")
    func status() throws {
        let service = try PrivateSecretService()
        defer { service.stop() }
        var status = try Self.json(try service.probe(["status", "--group", Self.group]))
        #expect(status["groupCollectionExists"] as? Bool == false)
        #expect(
            (status["description"] as? String)?.hasSuffix(
                "; the group has no collection of its own (the default one holds its items); provider gnome-keyring-d; 0 item(s)") == true,
            "\(status)")
        #expect(status["provider"] as? String == "gnome-keyring-d")
        #expect(status["itemCount"] as? Int == 0)
        try service.createCollection(label: Self.group)
        try Self.save(service)
        status = try Self.json(try service.probe(["status", "--group", Self.group]))
        #expect(status["groupCollectionExists"] as? Bool == true)
        #expect(Self.location(status)["label"] as? String == Self.group)
        #expect(status["itemCount"] as? Int == 1)
    }

    @Test("invalid input is a typed error, never a crash")
    func invalidInput() throws {
        let service = try PrivateSecretService(provider: .none)
        defer { service.stop() }
        let badGroup = try service.probe(["lookup", "--group", "com example/x", "--issuer", "i", "--client-id", "c", "--account", "a"])
        #expect(badGroup.status == 10)
        #expect(try Self.json(badGroup)["error"] as? String == "invalidGroup")
        let emptyAccount = try service.probe(
            ["save", "--group", Self.group, "--issuer", "i", "--client-id", "c", "--account", ""], stdin: "{}")
        #expect(emptyAccount.status == 10)
        #expect(try Self.json(emptyAccount)["error"] as? String == "invalidKey")
    }

    @Test("the harness leaves no processes behind")
    func harnessCleansUp() throws {
        let service = try PrivateSecretService()
        let pids = service.processIdentifiers
        #expect(pids.count == 2)
        service.stop()
        for pid in pids { #expect(kill(pid, 0) != 0, "process \(pid) still exists") }
        #expect(!FileManager.default.fileExists(atPath: service.root.path))
    }

    static func pairs(_ attributes: [String]) -> [String] {
        stride(from: 0, to: attributes.count, by: 2).map { "\(attributes[$0])=\(attributes[$0 + 1])" }
    }

    static func hex(_ text: String) -> String { text.utf8.map { String(format: "%02x", $0) }.joined() }
}
