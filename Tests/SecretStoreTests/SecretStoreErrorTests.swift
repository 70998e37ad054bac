import Testing
@testable import SecretStore

@Suite struct SecretStoreErrorTests {
    @Test func noSessionBusExplainsWhatToDoOverSSH() throws {
        let text = SecretStoreError.noSessionBus(detail: "Cannot autolaunch D-Bus without X11 $DISPLAY").description
        #expect(text.contains("dbus-run-session -- bash"))
        #expect(text.contains("gnome-keyring-daemon --unlock"))
        #expect(text.contains("--insecure-storage"))
        // A headless newcomer is steered to the encrypted store first.
        let encrypted = try #require(text.range(of: "--storage encrypted-file")),
            kernel = try #require(text.range(of: "--storage kernel-keyring"))
        #expect(encrypted.lowerBound < kernel.lowerBound)
    }

    @Test func lockedAndDismissedAreDistinct() {
        let locked = SecretStoreError.locked(collection: "Login")
        let dismissed = SecretStoreError.unlockDismissed(collection: "Login")
        #expect(locked != dismissed)
        #expect(locked.description.contains("‘Login’ is locked"))
        #expect(dismissed.description.contains("dismissed"))
    }

    @Test func timedOutSaysHowLongAndWhat() {
        let text = SecretStoreError.timedOut(operation: "search for items", seconds: 5).description
        #expect(text.contains("within 5 s"))
        #expect(text.contains("search for items"))
    }

    @Test func plainFileErrorsAreActionable() {
        #expect(
            SecretStoreError.plainFilePermissions(path: "/x", mode: 0o644, expected: 0o600).description
                .contains("chmod 0600 /x"))
        #expect(SecretStoreError.plainFileIO(path: "/x", operation: "read", errno: 13).description.contains("EACCES"))
        #expect(SecretStoreError.plainFileCorrupt(path: "/x", reason: "r").description.contains("left as it is"))
    }

    @Test func corruptItemNamesTheItemButNotItsSecret() throws {
        let group = try SecretGroup("g")
        let item = StoredItem(
            key: ItemKey(group: group, issuer: "i", clientID: "c", account: "a", kind: "tokens"), label: "authkit: a",
            secret: nil, location: .plainFile(path: "/p"), problem: .secretNotText)
        #expect(throws: SecretStoreError.corruptItem("authkit: a", reason: "its secret is not UTF-8 text")) {
            try item.validatedSecret()
        }
    }
}
