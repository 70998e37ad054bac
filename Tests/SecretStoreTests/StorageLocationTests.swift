import Testing
@testable import SecretStore

@Suite struct StorageLocationTests {
    @Test func descriptionsFitToPrint() {
        #expect(
            StorageLocation.collection(label: "com.example.shared", objectPath: "/c", isGroupCollection: true, isLocked: false)
                .description == "Secret Service collection ‘com.example.shared’")
        let fallback = StorageLocation.collection(
            label: "Login", objectPath: "/login", isGroupCollection: false, isLocked: false, fallbackReason: "no prompter")
        // Plain words, no "default collection … could not be created" jargon; the
        // reason is kept for logs.
        #expect(fallback.description == "Secret Service keyring ‘Login’ (encrypted)")
        #expect(fallback.fallbackExplanation == "the group's own collection is not used (it could not be created: no prompter)")
        #expect(!fallback.isGroupCollection)
        let plain = StorageLocation.plainFile(path: "/home/ada/.local/state/authkit/g.json")
        #expect(plain.isPlainFile)
        #expect(plain.description == "PLAIN FILE /home/ada/.local/state/authkit/g.json, not encrypted")
    }
}
