import AuthKitCore
import Foundation
import SecretStore
import Testing
import TestSupport

@testable import AuthKit

/// A store from a test target: added with one list, it is a `--storage` choice, in the help
/// and the config file's check, the store a session makes for the choice, and where a real
/// sign-in is saved, read and refreshed — with nothing in `Sources/` changed for it. (Added
/// for each test's task only: the other tests of this process never see it.)
@Suite struct ToyStoreTests {
    /// The one list.
    static let stores: [any StoreKind.Type] = [ToyStore.self]

    @Test func aStoreFromATestTargetIsAChoiceLikeTheBuiltInOnes() throws {
        try StoreKinds.$added.withValue(Self.stores) { try choiceLikeTheBuiltInOnes() }
        #expect(StorageChoice(rawValue: "toy") == nil, "outside the task that added it, no toy store")
    }

    func choiceLikeTheBuiltInOnes() throws {
        let toy = try #require(StorageChoice(rawValue: "toy"))
        #expect(StorageChoice.allCases.last == toy && StorageChoice.allCases.count == StoreKinds.all.count)
        #expect(StorageChoice.helpList.hasSuffix("toy (this process's memory; a test's toy)"), "\(StorageChoice.helpList)")
        #expect(StorageChoice.names.hasSuffix(" or toy"))
        #expect(toy.makeStore() is ToyStore)
        // A store listed twice is one choice.
        StoreKinds.$added.withValue(Self.stores + [ToyStore.self]) {
            #expect(StoreKinds.all.filter { $0.name == "toy" }.count == 1)
        }

        let home = try TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: home) }
        let environment = ["HOME": home.path, "XDG_CONFIG_HOME": home.path, "AUTHKIT_STORAGE": "toy"]
        #expect(try ProfileResolver.load(environment: environment).resolve().storage == toy)
        let refused = ["HOME": home.path, "XDG_CONFIG_HOME": home.path, "AUTHKIT_STORAGE": "toys"]
        #expect(throws: ConfigurationError.self) { try ProfileResolver.load(environment: refused).resolve() }
        // A plug-in's mapping may name it too.
        let mapped = try ConfigFile.parse("[registry \"r.example\"]\nstorage = toy\n", path: "config")
        #expect(CredentialMap.registryTarget(server: "r.example", in: mapped)?.storage == "toy")
    }

    @Test func aRealSignInLivesInTheToyStore() async throws {
        try await StoreKinds.$added.withValue(Self.stores) { try await realSignIn() }
    }

    func realSignIn() async throws {
        let toy = try #require(StorageChoice(rawValue: "toy"))
        let harness = try await SignInHarness.start()
        var profile = try harness.profile()
        profile.storage = toy
        let session = try SharedSession(
            group: harness.group, store: toy.makeStore(), environment: harness.environment, lockTimeout: .seconds(20))
        let flow = SignInFlow(profile: profile, session: session, transport: CurlHTTPTransport(), browser: harness.browser())
        _ = try await harness.run(flow).get()
        #expect(StorageChoice(store: session.store) == toy)
        let status = try await session.store.storageStatus(for: SecretGroup(harness.group))
        #expect(status.itemCount >= 1 && "\(status.location)".contains("memory"), "\(status)")
        #expect(try await harness.itemCount() == 0, "nothing in the harness's plain file")

        let first = try await session.validAccessToken(minimumLifetime: .seconds(60))
        let refreshed = try await session.validAccessToken(replacing: first)
        #expect(first.value != refreshed.value, "refreshed, and the rotation kept in the toy store")
        #expect(try await harness.refreshCount() == 1)
        #expect(try await session.validAccessToken(minimumLifetime: .seconds(60)).value == refreshed.value)

        // The toy's own failure, in its own words, reaches the caller as a store's error.
        let filler = toy.makeStore()
        for index in 0..<ToyStore.capacity {
            _ = try? await filler.save(
                Array("x".utf8), for: ItemKey(group: session.group, issuer: "i", clientID: "c", account: "\(index)", kind: "x"))
        }
        let full = ItemKey(group: session.group, issuer: "i", clientID: "c", account: "one more", kind: "x")
        await #expect(
            throws: SecretStoreError.store(StoreFailure(store: "toy", summary: "the toy store is full", hint: "sign somebody out of it"))
        ) {
            try await filler.save(Array("x".utf8), for: full)
        }
        _ = try await filler.deleteAll(in: session.group)
        #expect(AuthKitError.storage(.store(StoreFailure(store: "toy", summary: "the toy store is full"))).category == .storage)
    }
}
