import Foundation
import SecretStore
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Issue 11: the kernel's persistent keyring as a store, against the real kernel. Each test
/// uses a group of its own (the persistent keyring is shared by every process of the user)
/// and removes it afterwards.
@Suite struct KernelKeyringStoreTests {
    let store = KernelKeyringStore()

    func group() throws -> SecretGroup { try SecretGroup("com.example.kr-\(UInt32.random(in: 0...UInt32.max))") }
    func key(_ group: SecretGroup, _ account: String = "ada@example.test") -> ItemKey {
        ItemKey(group: group, issuer: "https://login.example/tenant/v2.0", clientID: "client-1", account: account, kind: "tokens")
    }

    static let probe = { try? PrivateSecretService.probeExecutable() }()

    /// /proc/keys as cat reads it (a proc file reports size 0; read it as a stream).
    static func procKeys() throws -> String {
        try ProcessRunner.run(URL(fileURLWithPath: "/bin/cat"), ["/proc/keys"], timeout: 10).stdout
    }

    @Test func storesReadsListsAndDeletesOneKeyPerAccount() async throws {
        let group = try group()
        defer { Task { [store] in _ = try? await store.deleteAll(in: group) } }
        let ada = key(group), grace = key(group, "grace hopper;%x@example.test")
        let location = try await store.save(Array(#"{"a":1}"#.utf8), for: ada)
        try await store.save(Array(#"{"g":1}"#.utf8), for: grace)
        guard case .kernelKeyring(let keyring, _) = location else { Issue.record("not a kernel keyring location: \(location)"); return }
        #expect(location.description.contains("memory only"))
        #expect(try await store.item(for: ada)?.secret == Array(#"{"a":1}"#.utf8))
        #expect(try await store.item(for: grace)?.key == grace, "a description with spaces, ; and % survives")
        #expect(try await store.items(matching: ItemQuery(group: group), loadSecrets: false).count == 2)
        // Replace: one key, the new payload.
        try await store.save(Array(#"{"a":2}"#.utf8), for: ada)
        #expect(try await store.item(for: ada)?.secret == Array(#"{"a":2}"#.utf8))
        #expect(try await store.items(matching: ItemQuery(group: group), loadSecrets: false).count == 2)
        // Another group is untouched by a delete-all.
        let other = try self.group()
        try await store.save(Array("x".utf8), for: key(other))
        #expect(try await store.deleteAll(in: group) == 2)
        #expect(try await store.item(for: key(other)) != nil)
        #expect(try await store.delete(key(other)))
        #expect(try await store.delete(key(other)) == false)
        // Permissions: possessor and user only (no group, no other bits).
        let keys = try #require(try Self.procKeys().split(separator: "\n").first { $0.contains(String(format: "%08x", keyring)) })
        let fields = keys.split(separator: " ").filter { !$0.isEmpty }
        #expect(fields.count > 4 && fields[4] == "3f3f0000", "group/other permission bits on \(keys)")
    }

    /// A process in a new, unrelated session keyring (as a new SSH session or a cron job)
    /// finds the same item.
    @Test func anotherSessionFindsTheSameSignIn() async throws {
        let probe = try #require(Self.probe)
        let group = try group()
        defer { Task { [store] in _ = try? await store.deleteAll(in: group) } }
        try await store.save(Array(#"{"shared":true}"#.utf8), for: key(group))
        let result = try await ProcessRunner.run(
            URL(fileURLWithPath: "/usr/bin/keyctl"),
            ["session", "-", probe.path, "--kernel-keyring", "--show-secret", "lookup", "--group", group.name,
             "--issuer", "https://login.example/tenant/v2.0", "--client-id", "client-1", "--account", "ada@example.test"], timeout: 30)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains(#"\"shared\":true"#), "\(result.stdout)")
    }

    /// keyctl blocked (Docker's default seccomp profile): one clear error, no fallback.
    @Test func aBlockedSyscallIsAClearError() async throws {
        let probe = try #require(Self.probe)
        let helper = try NoKeyctl.build()
        let result = try await ProcessRunner.run(helper, [probe.path, "--kernel-keyring", "list", "--group", "com.example.blocked"], timeout: 30)
        #expect(result.stdout.contains("kernelKeyringUnavailable"), "\(result.stdout) \(result.stderr)")
        #expect(result.stdout.contains("seccomp") && result.stdout.contains("--storage secret-service"))
    }

    /// As an unprivileged user (CI runs as root, where quotas hardly apply): a record larger
    /// than the user's key quota is refused with the sysctls named, and the old one is kept;
    /// another user cannot read the key.
    @Test func quotaAndOtherUsersAsAnUnprivilegedUser() async throws {
        if let reason = UnprivilegedUser.unavailableReason {
            withKnownIssue("needs the unprivileged test user: \(reason)", isIntermittent: true) { throw HarnessError(reason) }
            return
        }
        let probe = try #require(Self.probe)
        // The probe must be reachable by the user: a copy in a world-readable place.
        let directory = try TestPaths.makeTemporaryDirectory(prefix: "authkit-kr")
        defer { try? FileManager.default.removeItem(at: directory) }
        chmod(directory.path, 0o755)
        let copy = directory.appendingPathComponent("probe")
        try FileManager.default.copyItem(at: probe, to: copy)
        chmod(copy.path, 0o755)
        let group = "com.example.quota-\(UInt32.random(in: 0...UInt32.max))"
        let key = ["--group", group, "--issuer", "https://i", "--client-id", "c", "--account", "a"]
        let environment = ["HOME": "/tmp", "PATH": "/usr/bin:/bin"]
        func probeAsUser(_ arguments: [String], stdin: String? = nil) throws -> ProcessResult {
            try UnprivilegedUser.run(copy, ["--kernel-keyring"] + arguments, environment: environment, stdin: stdin)
        }
        defer { _ = try? probeAsUser(["delete-all", "--group", group]) }
        let small = try probeAsUser(["save"] + key, stdin: #"{"v":"small"}"#)
        #expect(small.status == 0, "\(small.stdout) \(small.stderr)")
        let maxBytes = Int((try? String(contentsOfFile: "/proc/sys/kernel/keys/maxbytes", encoding: .utf8))?.filter(\.isNumber) ?? "") ?? 20000
        let huge = #"{"v":""# + String(repeating: "x", count: min(maxBytes + 1000, 32000)) + #""}"#
        let refused = try probeAsUser(["save"] + key, stdin: huge)
        #expect(refused.stdout.contains("kernelKeyringQuota") || refused.stdout.contains("providerFailure"), "\(refused.stdout)")
        if refused.stdout.contains("kernelKeyringQuota") { #expect(refused.stdout.contains("kernel.keys.maxbytes")) }
        let kept = try probeAsUser(["--show-secret", "lookup"] + key)
        #expect(kept.stdout.contains(#"\"v\":\"small\""#), "the previous record must stay: \(kept.stdout)")
        // Root's process sees nothing of the user's group: persistent keyrings are per uid.
        let mine = try await store.items(matching: ItemQuery(group: try SecretGroup(group)), loadSecrets: false)
        #expect(mine.isEmpty)
        // And the user cannot read root's key, even knowing its id.
        let rootGroup = try self.group()
        defer { Task { [store] in _ = try? await store.deleteAll(in: rootGroup) } }
        try await store.save(Array(#"{"root":"secret-record"}"#.utf8), for: self.key(rootGroup))
        let keys = try Self.procKeys().split(separator: "\n")
        let line = try #require(keys.first { $0.contains("authkit1 ") && $0.contains(" user ") && $0.contains("client-1") })
        let id = String(line.split(separator: " ")[0])
        let stolen = try UnprivilegedUser.run(URL(fileURLWithPath: "/usr/bin/keyctl"), ["print", "0x" + id], environment: environment)
        #expect(stolen.status != 0 && !stolen.stdout.contains("secret-record"), "another user read the key: \(stolen.stdout)")
    }
}

