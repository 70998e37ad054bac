import Foundation
import Testing
import TestSupport
@testable import SecretStore

@Suite struct PlainFileStoreTests {
    let group = try! SecretGroup("com.example.shared")

    func key(_ account: String = "ada@contoso.com") -> ItemKey {
        ItemKey(group: group, issuer: "https://idp.example", clientID: "client-1", account: account, kind: "tokens")
    }

    func withDirectory(_ body: (String) async throws -> Void) async throws {
        let root = try TestPaths.makeTemporaryDirectory(prefix: "authkit-plain")
        defer { try? FileManager.default.removeItem(at: root) }
        try await body(root.appendingPathComponent("state/authkit").path)
    }

    func mode(_ path: String) throws -> Int {
        try #require(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
    }

    @Test func savesWithPrivateModesAndReadsBack() async throws {
        try await withDirectory { directory in
            let store = PlainFileStore(directory: directory)
            let location = try await store.save(Array("{\"a\":1}".utf8), for: key())
            #expect(location == .plainFile(path: directory + "/com.example.shared.json"))
            #expect(location.description.hasPrefix("PLAIN FILE "))
            #expect(try mode(directory) == 0o700)
            #expect(try mode(directory + "/com.example.shared.json") == 0o600)
            let item = try #require(try await store.item(for: key()))
            #expect(item.secret == Array("{\"a\":1}".utf8))
            #expect(item.location.isPlainFile)
            #expect(item.label == key().defaultLabel)
            let listed = try await store.items(matching: ItemQuery(group: group), loadSecrets: false)
            #expect(listed.count == 1 && listed[0].secret == nil)
            // No temporary files are left behind.
            let names = try FileManager.default.contentsOfDirectory(atPath: directory)
            #expect(names.sorted() == ["com.example.shared.json", "com.example.shared.lock"])
        }
    }

    @Test func saveReplacesDeleteAndDeleteAll() async throws {
        try await withDirectory { directory in
            let store = PlainFileStore(directory: directory)
            try await store.save(Array("1".utf8), for: key())
            try await store.save(Array("2".utf8), for: key())
            try await store.save(Array("3".utf8), for: key("grace@contoso.com"))
            let items = try await store.items(matching: ItemQuery(group: group), loadSecrets: true)
            #expect(items.count == 2)
            #expect(try await store.item(for: key())?.secret == Array("2".utf8))
            #expect(try await store.delete(key()))
            #expect(try await !store.delete(key()))
            #expect(try await store.item(for: key()) == nil)
            #expect(try await store.deleteAll(in: group) == 1)
            #expect(try await store.items(matching: ItemQuery(group: group), loadSecrets: true).isEmpty)
            #expect(try await store.deleteAll(in: group) == 0)
        }
    }

    @Test func groupsAreSeparateFiles() async throws {
        try await withDirectory { directory in
            let store = PlainFileStore(directory: directory)
            let other = try SecretGroup("com.example.other")
            try await store.save(Array("a".utf8), for: key())
            #expect(try await store.items(matching: ItemQuery(group: other), loadSecrets: true).isEmpty)
        }
    }

    @Test func concurrentSavesLoseNothing() async throws {
        try await withDirectory { directory in
            let store = PlainFileStore(directory: directory)
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                for index in 0..<20 {
                    tasks.addTask { try await store.save(Array("\(index)".utf8), for: key("user\(index)@example.com")) }
                }
                try await tasks.waitForAll()
            }
            #expect(try await store.items(matching: ItemQuery(group: group), loadSecrets: false).count == 20)
        }
    }

    @Test func refusesLooseDirectoryAndFileModes() async throws {
        try await withDirectory { directory in
            let store = PlainFileStore(directory: directory)
            try await store.save(Array("x".utf8), for: key())
            let file = directory + "/com.example.shared.json"
            chmod(file, 0o644)
            await #expect(throws: SecretStoreError.plainFilePermissions(path: file, mode: 0o644, expected: 0o600)) {
                try await store.item(for: key())
            }
            chmod(file, 0o600)
            chmod(directory, 0o755)
            await #expect(throws: SecretStoreError.plainFilePermissions(path: directory, mode: 0o755, expected: 0o700)) {
                try await store.save(Array("y".utf8), for: key())
            }
            chmod(directory, 0o700)
            #expect(try await store.item(for: key())?.secret == Array("x".utf8))
        }
    }

    @Test func refusesAnotherOwnersFile() async throws {
        guard geteuid() == 0 else { return }  // only root can give a file away; as a user the check is the same code
        try await withDirectory { directory in
            let store = PlainFileStore(directory: directory)
            try await store.save(Array("x".utf8), for: key())
            let file = directory + "/com.example.shared.json"
            #expect(chown(file, 65534, 65534) == 0)
            await #expect(throws: SecretStoreError.plainFileOwner(path: file, owner: 65534)) {
                try await store.item(for: key())
            }
        }
    }

    @Test func refusesASymbolicLink() async throws {
        try await withDirectory { directory in
            let store = PlainFileStore(directory: directory)
            try await store.save(Array("x".utf8), for: key())
            let file = directory + "/com.example.shared.json"
            try FileManager.default.moveItem(atPath: file, toPath: directory + "/elsewhere.json")
            try FileManager.default.createSymbolicLink(atPath: file, withDestinationPath: directory + "/elsewhere.json")
            await #expect(throws: SecretStoreError.self) { try await store.item(for: key()) }
        }
    }

    @Test func corruptFileIsReportedAndLeftInPlace() async throws {
        try await withDirectory { directory in
            let store = PlainFileStore(directory: directory)
            try await store.save(Array("x".utf8), for: key())
            let file = directory + "/com.example.shared.json"
            let garbage = Data("{\"schema\":\"io.github.authkit.Token\",\"items\":[".utf8)
            try garbage.write(to: URL(fileURLWithPath: file))
            await #expect {
                try await store.items(matching: ItemQuery(group: group), loadSecrets: true)
            } throws: { error in
                if case .plainFileCorrupt(let path, _) = error as? SecretStoreError { return path == file }
                return false
            }
            await #expect(throws: SecretStoreError.self) { try await store.save(Array("y".utf8), for: key()) }
            #expect(try Data(contentsOf: URL(fileURLWithPath: file)) == garbage)
            // Only an explicit delete-all removes it.
            #expect(try await store.deleteAll(in: group) == 1)
            #expect(!FileManager.default.fileExists(atPath: file))
        }
    }

    @Test func corruptEntryIsReportedAndKeptAcrossSaves() async throws {
        try await withDirectory { directory in
            let file = directory + "/com.example.shared.json"
            try FileManager.default.createDirectory(
                atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            let text =
                #"{"schema":"io.github.authkit.Token","group":"com.example.shared","items":[{"issuer":"i","client_id":"c","kind":"tokens","label":"odd","secret":"s","extra":true}]}"#
            _ = FileManager.default.createFile(atPath: file, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600])
            let store = PlainFileStore(directory: directory)
            let items = try await store.items(matching: ItemQuery(group: group), loadSecrets: true)
            #expect(items.count == 1)
            #expect(items.first?.problem == .missingAttributes(["account"]))
            #expect(items.first?.secret == nil)
            try await store.save(Array("new".utf8), for: key())
            let after = try String(contentsOfFile: file, encoding: .utf8)
            #expect(after.contains(#"{"issuer":"i","client_id":"c","kind":"tokens","label":"odd","secret":"s","extra":true}"#))
            #expect(try await store.items(matching: ItemQuery(group: group), loadSecrets: false).count == 2)
        }
    }

    @Test func fileWithAMemberNamedTwiceIsCorruptAndLeftInPlace() async throws {
        try await withDirectory { directory in
            let file = directory + "/com.example.shared.json"
            try FileManager.default.createDirectory(
                atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            // Two secrets for one item: which one a reader sees would depend on the parser.
            let text =
                #"{"schema":"io.github.authkit.Token","group":"com.example.shared","items":[{"issuer":"https://idp.example","client_id":"client-1","account":"ada@contoso.com","kind":"tokens","format":"1","label":"l","secret":"first","secret":"second"}]}"#
            #expect(FileManager.default.createFile(atPath: file, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600]))
            let store = PlainFileStore(directory: directory)
            await #expect(
                throws: SecretStoreError.plainFileCorrupt(path: file, reason: "not valid JSON: duplicate member name ‘secret’ at byte 215")
            ) {
                try await store.item(for: key())
            }
            await #expect(throws: SecretStoreError.self) { try await store.save(Array("y".utf8), for: key()) }
            #expect(try String(contentsOfFile: file, encoding: .utf8) == text)
        }
    }

    @Test func keepsTheCreationTimeAsAnIntegerAcrossSaves() async throws {
        try await withDirectory { directory in
            let file = directory + "/com.example.shared.json"
            let store = PlainFileStore(directory: directory)
            try await store.save(Array("one".utf8), for: key())
            // Back-date the item so a second save in the same second still shows which time is kept.
            let first = try String(contentsOfFile: file, encoding: .utf8)
            let backdated = first.replacing(#/"created":\d+,"modified":\d+/#, with: #""created":1000000000,"modified":1000000000"#)
            #expect(backdated != first)
            try Data(backdated.utf8).write(to: URL(fileURLWithPath: file))
            try await store.save(Array("two".utf8), for: key())
            let item = try #require(try await store.item(for: key()))
            #expect(item.secret == Array("two".utf8))
            #expect(item.created == 1_000_000_000)
            #expect(try #require(item.modified) > 1_000_000_000)
            #expect(try String(contentsOfFile: file, encoding: .utf8).contains(#""created":1000000000,"modified":"#))
        }
    }

    @Test func rejectsSecretsThatAreNotText() async throws {
        try await withDirectory { directory in
            await #expect(throws: SecretStoreError.invalidSecret(reason: "it is not UTF-8 text")) {
                try await PlainFileStore(directory: directory).save([0xFF], for: key())
            }
            // The Secret Service store checks before it touches D-Bus.
            await #expect(throws: SecretStoreError.invalidSecret(reason: "it is not UTF-8 text")) {
                try await SecretServiceStore().save([0xFF], for: key())
            }
        }
    }

    @Test func defaultDirectoryFollowsXDGStateHome() {
        let directory = PlainFileStore.defaultDirectory()
        if let state = ProcessInfo.processInfo.environment["XDG_STATE_HOME"], state.hasPrefix("/") {
            #expect(directory == state + "/authkit")
        } else {
            #expect(directory.hasSuffix("/.local/state/authkit"))
        }
    }
}
