import Foundation
@testable import SecretStore
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The kernel's persistent keyring as a store, against the real kernel. Each test
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
        defer { Keyctl.removeGroup(group.name) }
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
        // Permissions: the possessor only (the user may see the key, nothing more).
        let keys = try #require(try Self.procKeys().split(separator: "\n").first { $0.contains(String(format: "%08x", keyring)) })
        let fields = keys.split(separator: " ").filter { !$0.isEmpty }
        #expect(fields.count > 4 && fields[4] == "3f010000", "user/group/other permission bits on \(keys)")
        // Another group is untouched by a delete-all.
        let other = try self.group()
        try await store.save(Array("x".utf8), for: key(other))
        #expect(try await store.deleteAll(in: group) == 2)
        #expect(try await store.item(for: key(other)) != nil)
        #expect(try await store.delete(key(other)))
        #expect(try await store.delete(key(other)) == false)
        Keyctl.removeGroup(other.name)
    }

    /// A process in a new, unrelated session keyring (as a new SSH session or a cron job)
    /// finds the same item.
    @Test func anotherSessionFindsTheSameSignIn() async throws {
        let probe = try #require(Self.probe)
        let group = try group()
        defer { Keyctl.removeGroup(group.name) }
        try await store.save(Array(#"{"shared":true}"#.utf8), for: key(group))
        let result = try await ProcessRunner.run(
            URL(fileURLWithPath: "/usr/bin/keyctl"),
            [
                "session", "-", probe.path, "--kernel-keyring", "--show-secret", "lookup", "--group", group.name,
                "--issuer", "https://login.example/tenant/v2.0", "--client-id", "client-1", "--account", "ada@example.test",
            ], timeout: 30)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains(#"\"shared\":true"#), "\(result.stdout)")
    }

    /// keyctl blocked (Docker's default seccomp profile): one clear error, no fallback.
    @Test func aBlockedSyscallIsAClearError() async throws {
        let probe = try #require(Self.probe)
        let helper = try NoKeyctl.build()
        let result = try await ProcessRunner.run(
            helper, [probe.path, "--kernel-keyring", "list", "--group", "com.example.blocked"], timeout: 30)
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
        defer {
            _ = try? probeAsUser(["delete-all", "--group", group])
            _ = try? UnprivilegedUser.run(
                URL(fileURLWithPath: "/usr/bin/keyctl"), Keyctl.removeGroupArguments(group), environment: environment)
        }
        let small = try probeAsUser(["save"] + key, stdin: #"{"v":"small"}"#)
        #expect(small.status == 0, "\(small.stdout) \(small.stderr)")
        let maxBytes =
            Int((try? String(contentsOfFile: "/proc/sys/kernel/keys/maxbytes", encoding: .utf8))?.filter(\.isNumber) ?? "") ?? 20000
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
        defer { Keyctl.removeGroup(rootGroup.name) }
        try await store.save(Array(#"{"root":"secret-record"}"#.utf8), for: self.key(rootGroup))
        // This group's own key: another test of the suite widens its key's permissions at the
        // same time, and a key found by its description alone may be that one.
        let id = try Self.keyID(rootGroup)
        let stolen = try UnprivilegedUser.run(URL(fileURLWithPath: "/usr/bin/keyctl"), ["print", "0x" + id], environment: environment)
        #expect(stolen.status != 0 && !stolen.stdout.contains("secret-record"), "another user read the key: \(stolen.stdout)")
    }

    /// The group keyring's id (hex, as /proc/keys writes it).
    static func keyringID(_ group: SecretGroup) throws -> String {
        let line = try #require(
            try procKeys().split(separator: "\n").first {
                $0.hasSuffix("authkit:\(group.name): 1") || $0.contains("authkit:\(group.name):")
            })
        return String(line.split(separator: " ")[0])
    }

    /// The one key in the group's keyring (hex id, 8 digits as /proc/keys writes it).
    static func keyID(_ group: SecretGroup) throws -> String {
        let members = try keyctl(["rlist", "0x" + keyringID(group)]).stdout.split(whereSeparator: \.isWhitespace)
        try #require(members.count == 1, "\(members)")
        let id = try #require(UInt32(members[0]))
        let hex = String(id, radix: 16)
        return String(repeating: "0", count: max(0, 8 - hex.count)) + hex
    }

    static func keyctl(_ arguments: [String]) throws -> ProcessResult { try Keyctl.run(arguments) }

    static func permissions(_ id: String) throws -> String {
        let line = try #require(try procKeys().split(separator: "\n").first { $0.hasPrefix(id + " ") })
        return String(line.split(separator: " ").filter { !$0.isEmpty }[4])
    }

    /// A key another process of the user opened to everyone is narrowed when read, replaced
    /// by a private one when saved, and — when its permissions can no longer be changed —
    /// reported and never read, and replaced by the next save.
    @Test func aWidenedKeyIsNarrowedReplacedOrReported() async throws {
        let group = try group()
        defer { Keyctl.removeGroup(group.name) }
        let ada = key(group)
        try await store.save(Array(#"{"a":1}"#.utf8), for: ada)
        var id = try Self.keyID(group)
        #expect(try Self.keyctl(["setperm", "0x" + id, "0x3f3f3f3f"]).status == 0)
        #expect(try await store.item(for: ada)?.secret == Array(#"{"a":1}"#.utf8))
        #expect(try Self.permissions(id) == "3f010000", "narrowed again on read")

        // Widened, and setattr taken away: authkit can no longer narrow it.
        #expect(try Self.keyctl(["setperm", "0x" + id, "0x1f1f1f1f"]).status == 0)
        let items = try await store.items(matching: ItemQuery(group: group), loadSecrets: true)
        let exposed = try #require(items.first)
        #expect(exposed.secret == nil, "an exposed record is not read")
        guard case .exposed(let detail) = exposed.problem else {
            Issue.record("not reported: \(String(describing: exposed.problem))"); return
        }
        #expect(detail.contains("0x1f1f1f1f"))
        // The key's item is the unusable one, so a caller can say why instead of "not signed in".
        let unusable = try #require(try await store.item(for: ada))
        #expect(unusable.secret == nil && unusable.problem == exposed.problem)

        // The next save does not write into it: a new, private key.
        try await store.save(Array(#"{"a":2}"#.utf8), for: ada)
        let replaced = try Self.keyID(group)
        #expect(replaced != id, "the exposed key was updated in place")
        #expect(try Self.permissions(replaced) == "3f010000")
        #expect(try await store.item(for: ada)?.secret == Array(#"{"a":2}"#.utf8))
        #expect(try Self.keyctl(["print", "0x" + id]).status != 0, "the exposed key was invalidated")
        id = replaced
        // Fewer rights of our own (no setattr) lock nobody else in: still private, still read.
        #expect(try Self.keyctl(["setperm", "0x" + id, "0x1f010000"]).status == 0)
        #expect(try await store.item(for: ada)?.secret == Array(#"{"a":2}"#.utf8))
        #expect(try Self.permissions(id) == "1f010000", "left as it is")
    }

    /// `logout --group` destroys authkit's own keys only: another program's key linked into the
    /// group's keyring is unlinked from it and lives on.
    @Test func deleteAllDestroysOnlyOurKeys() async throws {
        let group = try group()
        let session = try Self.keyctl(["add", "user", "someone-elses-key", "keep me", "@u"])
        let foreign = session.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        try #require(session.status == 0 && !foreign.isEmpty, "\(session.stderr)")
        defer { _ = try? Self.keyctl(["unlink", foreign, "@u"]) }
        try await store.save(Array(#"{"a":1}"#.utf8), for: key(group))
        #expect(try Self.keyctl(["link", foreign, "0x" + Self.keyringID(group)]).status == 0)
        #expect(try await store.storageStatus(for: group).itemCount == 1, "only authkit's keys are counted")
        #expect(try await store.deleteAll(in: group) == 1)
        #expect(try Self.keyctl(["print", foreign]).stdout.contains("keep me"), "another program's key was destroyed")
        #expect(try await store.items(matching: ItemQuery(group: group), loadSecrets: false).isEmpty)
    }

    /// A user whose key quota is used up gets "the kernel keyring is full" and what to do —
    /// not a Secret Service error — wherever the kernel refuses with EDQUOT (creating the
    /// group's keyring, the persistent keyring, a key). (Filling the unprivileged user's real
    /// quota here would starve that user's other tests running beside it: the kernel frees
    /// dead keys only in the background. quotaAndOtherUsersAsAnUnprivilegedUser covers the
    /// real refusal of a save.)
    @Test func aFullQuotaIsNamedAsSuch() {
        for error in [
            KernelKeyringStore.failure(operation: "create the group's keyring", errno: EDQUOT),
            KernelKeyringStore.quotaExceeded(bytes: nil),
        ] {
            guard case .kernelKeyringQuota = error else { Issue.record("\(error)"); continue }
            #expect(error.summary.hasPrefix("the kernel keyring is full: nothing more fits the user's kernel key quota"))
            #expect(!error.description.contains("Secret Service"))
            #expect(error.hint?.contains("sysctl") == true && error.hint?.contains("authkit logout") == true)
            #expect(!error.description.contains("; ;"))
        }
        let other = KernelKeyringStore.failure(operation: "store the item", errno: EINVAL)
        #expect(other.description.hasPrefix("the kernel keyring failed to store the item: "))
    }
}
