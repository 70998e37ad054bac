import Age
import Foundation
import TestSupport
import Testing
@testable import SecretStore

/// What every store promises alike (``SecretStore``): the same refusals before a save touches
/// anything, and the same answer from `item(for:)` when the key's only item is unusable.
@Suite struct SecretStoreContractTests {
    enum Kind: String, CaseIterable, Sendable { case secretService, kernelKeyring, plainFile, encryptedFile }

    func key(_ group: SecretGroup) -> ItemKey {
        ItemKey(group: group, issuer: "https://idp.example", clientID: "client-1", account: "ada@example.test", kind: "tokens")
    }

    /// Every store refuses an empty secret and one that is not UTF-8 text (the record every
    /// store would read back as unusable) — the Secret Service before it touches D-Bus — and
    /// nothing is written.
    @Test(arguments: Kind.allCases) func aSaveRefusesWhatNoStoreCouldReadBack(kind: Kind) async throws {
        let root = try TestPaths.makeTemporaryDirectory(prefix: "authkit-contract")
        defer { try? FileManager.default.removeItem(at: root) }
        let group = try SecretGroup("com.example.contract-\(UInt32.random(in: 0...UInt32.max))")
        let store: any SecretStore =
            switch kind {
            case .secretService: SecretServiceStore()
            case .kernelKeyring: KernelKeyringStore()
            case .plainFile: PlainFileStore(directory: root.path + "/state")
            case .encryptedFile: EncryptedFileStore(directory: root.path + "/data", environment: [:])
            }
        await #expect(throws: SecretStoreError.invalidSecret(reason: "it is empty")) {
            try await store.save([], for: key(group))
        }
        await #expect(throws: SecretStoreError.invalidSecret(reason: "it is not UTF-8 text")) {
            try await store.save([0x7B, 0xFF, 0x7D], for: key(group))
        }
        let bad = ItemKey(group: group, issuer: "https://idp.example", clientID: "client-1", account: "", kind: "tokens")
        await #expect(throws: SecretStoreError.invalidKey(field: "account", reason: "it is empty")) {
            try await store.save(Array("{}".utf8), for: bad)
        }
        if kind != .secretService {
            #expect(try await store.items(matching: ItemQuery(group: group), loadSecrets: false).isEmpty, "nothing was written")
        }
    }

    /// A plain file whose only entry for the key has a record format this version does not
    /// know: `item(for:)` returns it with the problem, not nil (the kernel keyring's case, an
    /// exposed key, is in KernelKeyringStoreTests).
    @Test func itemForReturnsTheUnusableItemRatherThanNothing() async throws {
        let root = try TestPaths.makeTemporaryDirectory(prefix: "authkit-contract")
        defer { try? FileManager.default.removeItem(at: root) }
        let group = try SecretGroup("com.example.contract")
        let store = PlainFileStore(directory: root.path + "/state")
        try await store.save(Array(#"{"a":1}"#.utf8), for: key(group))
        let file = root.path + "/state/com.example.contract.json"
        let text = try String(contentsOfFile: file, encoding: .utf8)
        #expect(text.contains(#""format":"1""#))
        try Data(text.replacingOccurrences(of: #""format":"1""#, with: #""format":"9""#).utf8).write(to: URL(fileURLWithPath: file))
        let item = try #require(try await store.item(for: key(group)))
        #expect(item.problem == .unsupportedFormat("9") && item.secret == nil)
    }

    /// The encrypted-file store keeps the same promise: its only file for the key, refused
    /// (here a file of another group moved in), comes back with the problem, not as nil.
    @Test func theEncryptedFileStoreReturnsItsRefusedItemRatherThanNothing() async throws {
        let root = try TestPaths.makeTemporaryDirectory(prefix: "authkit-contract")
        let store = EncryptedFileStore(directory: root.path + "/data", environment: [:])
        defer {
            _ = try? store.lock()
            try? FileManager.default.removeItem(at: root)
        }
        _ = try store.createIdentity(passphrase: SecretBytes(Array("contract".utf8)))
        let group = try SecretGroup("com.example.contract"), other = try SecretGroup("com.example.elsewhere")
        let moved = ItemKey(group: other, issuer: key(group).issuer, clientID: "client-1", account: "ada@example.test", kind: "tokens")
        try await store.save(Array(#"{"a":1}"#.utf8), for: moved)
        try await store.save(Array(#"{"a":2}"#.utf8), for: key(group))
        let name = "/" + EncryptedFileStore.fileName(for: key(group))
        try FileManager.default.removeItem(atPath: store.folder(for: group) + name)
        try FileManager.default.moveItem(atPath: store.folder(for: other) + name, toPath: store.folder(for: group) + name)
        let item = try #require(try await store.item(for: key(group)))
        guard case .refused? = item.problem else {
            Issue.record("not refused: \(String(describing: item.problem))")
            return
        }
        #expect(item.secret == nil)
    }
}
