import Age
import Foundation
@testable import SecretStore
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The encrypted-file store with its real parts: files on disk, the kernel user keyring that
/// holds the unlocked identity, scrypt at age's work factor, and Debian's `age` opening what it
/// writes.
@Suite struct EncryptedFileStoreTests {
    static let passphrase = "correct horse battery staple"

    func key(_ group: SecretGroup, _ account: String = "ada@example.test") -> ItemKey {
        ItemKey(group: group, issuer: "https://idp.example", clientID: "client-1", account: account, kind: "tokens")
    }

    func secret(_ text: String) -> SecretBytes { SecretBytes(Array(text.utf8)) }

    /// A store in a fresh folder, set up and unlocked; locked again and removed afterwards.
    func withStore(environment: [String: String] = [:], _ body: (EncryptedFileStore, URL) async throws -> Void) async throws {
        let root = try TestPaths.makeTemporaryDirectory(prefix: "authkit-encrypted")
        let store = EncryptedFileStore(directory: root.path + "/data/authkit", environment: environment)
        defer {
            _ = try? store.lock()
            try? FileManager.default.removeItem(at: root)
        }
        _ = try store.createIdentity(passphrase: secret(Self.passphrase))
        try await body(store, root)
    }

    func mode(_ path: String) -> UInt32 {
        var info = stat()
        return lstat(path, &info) == 0 ? UInt32(info.st_mode) & 0o7777 : 0
    }

    /// One file per item under tokens/GROUP (0700 folders, 0600 files), read back, and removed
    /// one by one or by group without touching another group.
    @Test func savesReadsAndDeletesOneFilePerItem() async throws {
        try await withStore { store, _ in
            let a = try SecretGroup("com.example.a"), b = try SecretGroup("com.example.b")
            try await store.save(Array(#"{"n":1}"#.utf8), for: key(a))
            try await store.save(Array(#"{"n":2}"#.utf8), for: key(a, "bob@example.test"))
            let location = try await store.save(Array(#"{"n":3}"#.utf8), for: key(b))
            #expect(location == .file(store: "encrypted-file", path: store.folder(for: b), encrypted: true, isLocked: false))
            #expect(mode(store.directory) == 0o700 && mode(store.folder(for: a)) == 0o700)
            #expect(mode(store.identityPath) == 0o600 && mode(store.recipientPath) == 0o600)
            let files = try FileManager.default.contentsOfDirectory(atPath: store.folder(for: a)).filter { $0.hasSuffix(".age") }
            #expect(files.count == 2)
            for file in files {
                #expect(mode(store.folder(for: a) + "/" + file) == 0o600)
                let bytes = try Data(contentsOf: URL(fileURLWithPath: store.folder(for: a) + "/" + file))
                #expect(bytes.starts(with: Array("age-encryption.org/v1\n".utf8)))
                #expect(!String(decoding: bytes, as: UTF8.self).contains("ada@example.test"), "no key in clear")
            }
            #expect(try await store.item(for: key(a))?.secret == Array(#"{"n":1}"#.utf8))
            #expect(
                try await store.items(matching: ItemQuery(group: a), loadSecrets: false).map(\.key.account).sorted() == [
                    "ada@example.test", "bob@example.test",
                ])
            #expect(try await store.groups(holding: "tokens") == [a, b])
            #expect(try await store.delete(key(a)))
            #expect(try await store.item(for: key(a)) == nil)
            #expect(try await store.deleteAll(in: a) == 1)
            #expect(try await store.item(for: key(b))?.secret == Array(#"{"n":3}"#.utf8), "the other group is untouched")
        }
    }

    /// Locked, reads answer `encryptedStoreLocked` while saves and deletes still work; a
    /// wrong passphrase changes nothing; unlocking (with a lifetime) restores the reads.
    @Test func lockedIsAnAnswerAndSavingStillWorks() async throws {
        try await withStore { store, _ in
            let group = try SecretGroup("com.example.locked")
            try await store.save(Array(#"{"n":1}"#.utf8), for: key(group))
            #expect(try store.lock())
            #expect(try store.lockState() == .locked)
            await #expect(throws: SecretStoreError.encryptedStoreLocked(directory: store.directory)) {
                try await store.item(for: key(group))
            }
            #expect(try await store.storageStatus(for: group).location.isLocked)
            try await store.save(Array(#"{"n":2}"#.utf8), for: key(group, "bob@example.test"))
            let sealed = try Data(contentsOf: URL(fileURLWithPath: store.identityPath))
            #expect(throws: SecretStoreError.wrongPassphrase(path: store.identityPath)) {
                try store.unlock(passphrase: secret("wrong"), until: nil)
            }
            #expect(try Data(contentsOf: URL(fileURLWithPath: store.identityPath)) == sealed, "nothing was changed")
            let until = Int(time(nil)) + 3600
            try store.unlock(passphrase: secret(Self.passphrase), until: until)
            #expect(try store.lockState() == .unlocked(.keyring(until: until)))
            #expect(try await store.item(for: key(group, "bob@example.test"))?.secret == Array(#"{"n":2}"#.utf8))
        }
    }

    /// A flipped byte, a truncated file, a file from another group, another item's file copied
    /// over, a link, a file others may read and (as root) another user's file: each refused
    /// with its reason, never served, and the group's other item still read.
    @Test func tamperedFilesAreRefusedAndNothingElseIsLost() async throws {
        try await withStore { store, _ in
            let group = try SecretGroup("com.example.tamper"), other = try SecretGroup("com.example.other")
            let victim = key(group), bystander = key(group, "bob@example.test")
            let path = store.folder(for: group) + "/" + EncryptedFileStore.fileName(for: victim)
            let otherPath = store.folder(for: other) + "/" + EncryptedFileStore.fileName(for: victim)
            let bystanderPath = store.folder(for: group) + "/" + EncryptedFileStore.fileName(for: bystander)
            try await store.save(Array(#"{"who":"bob"}"#.utf8), for: bystander)
            try await store.save(Array(#"{"group":"other"}"#.utf8), for: key(other))
            let original = Array(#"{"who":"ada"}"#.utf8)
            let writeOriginal = { () async throws -> Void in
                _ = try await store.save(original, for: victim)
            }
            var cases: [(String, () throws -> Void, String)] = [
                (
                    "flipped byte",
                    {
                        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
                        bytes[bytes.count - 5] ^= 0x01
                        try Data(bytes).write(to: URL(fileURLWithPath: path))
                    }, "tampered"
                ),
                (
                    "truncated",
                    {
                        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
                        try Data(bytes.prefix(bytes.count - 20)).write(to: URL(fileURLWithPath: path))
                    }, "age file"
                ),
                (
                    "swapped group file",
                    {
                        unlink(path)
                        #expect(link(otherPath, path) == 0)
                    }, "belongs to the group ‘com.example.other’"
                ),
                (
                    "another item's file copied over",
                    {
                        unlink(path)
                        try FileManager.default.copyItem(atPath: bystanderPath, toPath: path)
                    }, "another item's record"
                ),
                (
                    "symbolic link",
                    {
                        unlink(path)
                        #expect(symlink(otherPath, path) == 0)
                    }, "symbolic link"
                ),
                ("readable by others", { #expect(chmod(path, 0o644) == 0) }, "mode 0644"),
            ]
            if geteuid() == 0, let user = getpwnam("authkit-test") {
                let uid = user.pointee.pw_uid
                cases.append(("another user's file", { #expect(chown(path, uid, 0) == 0) }, "belongs to user id \(uid)"))
            }
            for (name, tamper, reason) in cases {
                try await writeOriginal()
                try tamper()
                let item = try #require(try await store.item(for: victim), "\(name)")
                guard case .refused(let text)? = item.problem else {
                    Issue.record("\(name): not refused (\(String(describing: item.problem)))")
                    continue
                }
                #expect(text.contains(reason), "\(name): \(text)")
                #expect(item.secret == nil, "\(name): never served")
                #expect(try await store.item(for: bystander)?.secret == Array(#"{"who":"bob"}"#.utf8), "\(name)")
                #expect(try await store.item(for: key(other))?.secret == Array(#"{"group":"other"}"#.utf8), "\(name)")
                unlink(path)
            }
        }
    }

    /// A group folder that is a link (to a folder of the attacker's choosing) is refused with its
    /// reason, never followed; another group still reads.
    @Test func aLinkedGroupFolderIsRefused() async throws {
        try await withStore { store, root in
            let group = try SecretGroup("com.example.linked"), other = try SecretGroup("com.example.kept")
            try await store.save(Array(#"{"n":1}"#.utf8), for: key(group))
            try await store.save(Array(#"{"n":2}"#.utf8), for: key(other))
            let moved = root.appendingPathComponent("elsewhere").path
            #expect(rename(store.folder(for: group), moved) == 0)
            #expect(symlink(moved, store.folder(for: group)) == 0)
            await #expect {
                try await store.item(for: key(group))
            } throws: { error in
                (error as? SecretStoreError)?.summary.contains("symbolic link") == true
            }
            #expect(try await store.item(for: key(other))?.secret == Array(#"{"n":2}"#.utf8))
        }
    }

    /// The folders above a group's are checked on every read and write too: a `tokens` folder
    /// others may write to (where a group folder could be swapped), a link in its place, a data
    /// folder others may enter — each refused with its reason, never trusted because the last
    /// folder is ours; put right, everything reads again.
    @Test func theFoldersAboveAGroupAreCheckedOnReadAndWrite() async throws {
        try await withStore { store, root in
            let group = try SecretGroup("com.example.folders")
            try await store.save(Array(#"{"n":1}"#.utf8), for: key(group))
            let tokens = store.directory + "/tokens"
            func refused(_ words: String) async {
                await #expect {
                    try await store.item(for: key(group))
                } throws: { error in
                    (error as? SecretStoreError)?.summary.contains(words) == true
                }
                await #expect(throws: SecretStoreError.self) { try await store.save(Array(#"{"n":2}"#.utf8), for: key(group)) }
            }
            #expect(chmod(tokens, 0o777) == 0)
            await refused("tokens has mode 0777")
            #expect(chmod(tokens, 0o700) == 0)
            let moved = root.appendingPathComponent("tokens-elsewhere").path
            #expect(rename(tokens, moved) == 0 && symlink(moved, tokens) == 0)
            await refused("symbolic link")
            #expect(unlink(tokens) == 0 && rename(moved, tokens) == 0)
            #expect(chmod(store.directory, 0o755) == 0)
            await #expect(throws: SecretStoreError.self) { try store.recipient() }
            #expect(chmod(store.directory, 0o700) == 0)
            #expect(try await store.item(for: key(group))?.secret == Array(#"{"n":1}"#.utf8))
        }
    }

    /// Debian's age opens every file the store writes: the identity with `age -d` and the
    /// passphrase (typed on a pty), an item with `age -d -i IDENTITY`, its plaintext naming the
    /// group and the key.
    @Test func ageOpensEveryFileTheStoreWrites() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: RealAge.age.path), "age is not installed")
        try await withStore { store, root in
            let group = try SecretGroup("com.example.age")
            try await store.save(Array(#"{"access_token":"a"}"#.utf8), for: key(group))
            let identity = root.appendingPathComponent("identity.txt")
            let opened = try await ProcessRunner.run(
                TestPaths.python,
                [
                    "-c", RealAge.ptyDriver, Self.passphrase, RealAge.age.path, "-d", "-o", identity.path,
                    store.identityPath,
                ],
                timeout: 120)
            try #require(opened.status == 0, "age -d identity.age: \(opened.stderr)")
            let file = store.folder(for: group) + "/" + EncryptedFileStore.fileName(for: key(group))
            let decrypted = try await ProcessRunner.run(RealAge.age, ["-d", "-i", identity.path, file], timeout: 60)
            try #require(decrypted.status == 0, "age -d -i: \(decrypted.stderr)")
            #expect(decrypted.stdout.contains(#""group":"com.example.age""#))
            #expect(decrypted.stdout.contains(#""account":"ada@example.test""#))
            #expect(decrypted.stdout.contains(#""secret":"{\"access_token\":\"a\"}""#))
            #expect(try store.recipientText().map { String(decoding: try Data(contentsOf: identity), as: UTF8.self).contains($0) } == true)
        }
    }

    /// A service reads with the identity systemd hands it in `$CREDENTIALS_DIRECTORY` or the
    /// file `AUTHKIT_IDENTITY_FILE` names, with nothing unlocked; a sealed identity or another
    /// store's is refused with the reason.
    @Test func aServiceUsesTheIdentityItWasHanded() async throws {
        try await withStore { store, root in
            let group = try SecretGroup("com.example.service")
            try await store.save(Array(#"{"n":1}"#.utf8), for: key(group))
            try store.lock()
            let credentials = root.appendingPathComponent("credentials")
            try FileManager.default.createDirectory(at: credentials, withIntermediateDirectories: true)
            let plain = credentials.appendingPathComponent(EncryptedFileStore.credentialName)
            let opened = try await ProcessRunner.run(
                TestPaths.python,
                ["-c", RealAge.ptyDriver, Self.passphrase, RealAge.age.path, "-d", "-o", plain.path, store.identityPath],
                timeout: 120)
            try #require(opened.status == 0, "age -d identity.age: \(opened.stderr)")
            chmod(plain.path, 0o400)
            let service = EncryptedFileStore(directory: store.directory, environment: ["CREDENTIALS_DIRECTORY": credentials.path])
            #expect(try await service.item(for: key(group))?.secret == Array(#"{"n":1}"#.utf8))
            #expect(try service.lockState() == .unlocked(.file(plain.path)))
            let named = EncryptedFileStore(directory: store.directory, environment: ["AUTHKIT_IDENTITY_FILE": plain.path])
            #expect(try await named.item(for: key(group))?.secret == Array(#"{"n":1}"#.utf8))
            let sealed = EncryptedFileStore(directory: store.directory, environment: ["AUTHKIT_IDENTITY_FILE": store.identityPath])
            await #expect {
                try await sealed.item(for: key(group))
            } throws: { error in
                (error as? SecretStoreError)?.summary.contains("sealed with a passphrase") == true
            }
            let stranger = root.appendingPathComponent("stranger.txt")
            try Data(AgeIdentityFile.text(for: try X25519Identity.generate()).withUnsafeBytes { Array($0) }).write(to: stranger)
            chmod(stranger.path, 0o600)
            let wrong = EncryptedFileStore(directory: store.directory, environment: ["AUTHKIT_IDENTITY_FILE": stranger.path])
            await #expect {
                try await wrong.item(for: key(group))
            } throws: { error in
                (error as? SecretStoreError)?.summary.contains("not the identity of this store") == true
            }
        }
    }

    /// The unlock keeps the identity alone, in the persistent keyring, readable by its possessor
    /// only: nothing decrypted (no refresh token) waits beside it, every read opens the file anew,
    /// and locking removes it.
    @Test func theUnlockKeepsOnlyThePossessorOnlyIdentity() async throws {
        try await withStore { store, _ in
            let group = try SecretGroup("com.example.cache")
            try await store.save(Array(#"{"n":1}"#.utf8), for: key(group))
            #expect(try await store.item(for: key(group))?.secret == Array(#"{"n":1}"#.utf8))
            let recipient = try #require(try store.recipient())
            let ring = try #require(IdentityKeyring.ring(recipient))
            let members = try KernelKeyringStore.members(of: ring)
            #expect(members.count == 1, "only the identity")
            for id in members + [ring] {
                let described = try #require(KernelKeyringStore.describe(id))
                #expect(described.permissions == 0x3f01_0000, "possessor only: \(described)")
            }
            // A process of the user in a session keyring of its own (a sandbox's), or a login
            // session's, reads nothing by serial number; a possessor of the persistent keyring does.
            let identity = try #require(members.first)
            for session in [["session", "-"], ["session", "-", "sh", "-c", #"keyctl link @u @s && exec keyctl "$@""#, "sh"]] {
                let stolen = try await ProcessRunner.run(
                    URL(fileURLWithPath: "/usr/bin/keyctl"), session + ["pipe", String(identity)], timeout: 10)
                #expect(stolen.status != 0 && !stolen.stdout.contains("AGE-SECRET-KEY"), "\(session): \(stolen.stdout)")
            }
            let possessed = try Keyctl.run(["pipe", String(identity)])
            #expect(possessed.stdout.contains("AGE-SECRET-KEY"), "\(possessed.stdout) \(possessed.stderr)")
            try await store.save(Array(#"{"n":2}"#.utf8), for: key(group))
            #expect(try await store.item(for: key(group))?.secret == Array(#"{"n":2}"#.utf8))
            #expect(try KernelKeyringStore.members(of: ring).count == 1)
            #expect(try store.lock())
            #expect(IdentityKeyring.ring(recipient) == nil)
        }
    }

    /// A new passphrase re-seals the identity only: the token files stay byte for byte, the old
    /// passphrase no longer opens it, the new one does.
    @Test func changingThePassphraseKeepsTheFiles() async throws {
        try await withStore { store, _ in
            let group = try SecretGroup("com.example.change")
            try await store.save(Array(#"{"n":1}"#.utf8), for: key(group))
            let file = store.folder(for: group) + "/" + EncryptedFileStore.fileName(for: key(group))
            let before = try Data(contentsOf: URL(fileURLWithPath: file))
            #expect(throws: SecretStoreError.wrongPassphrase(path: store.identityPath)) {
                try store.changePassphrase(old: secret("wrong"), new: secret("new one"))
            }
            try store.changePassphrase(old: secret(Self.passphrase), new: secret("new one"))
            #expect(try Data(contentsOf: URL(fileURLWithPath: file)) == before)
            try store.lock()
            #expect(throws: SecretStoreError.wrongPassphrase(path: store.identityPath)) {
                try store.unlock(passphrase: secret(Self.passphrase), until: nil)
            }
            try store.unlock(passphrase: secret("new one"), until: nil)
            #expect(try await store.item(for: key(group))?.secret == Array(#"{"n":1}"#.utf8))
        }
    }
}
