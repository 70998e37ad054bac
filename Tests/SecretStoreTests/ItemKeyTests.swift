import Testing
@testable import SecretStore

@Suite struct ItemKeyTests {
    let group = try! SecretGroup("com.example.shared")

    @Test func defaultLabelIsReadableInSeahorse() {
        let key = ItemKey(
            group: group, issuer: "https://login.microsoftonline.com/9188040d/v2.0", clientID: "c",
            account: "ada@contoso.com", kind: "tokens")
        #expect(key.defaultLabel == "authkit: ada@contoso.com @ login.microsoftonline.com (com.example.shared)")
    }

    @Test(arguments: [
        ("https://login.microsoftonline.com/x/v2.0", "login.microsoftonline.com"),
        ("http://127.0.0.1:8080", "127.0.0.1:8080"), ("https://user@idp.example?x=1", "idp.example"),
        ("not a url", "not a url"), ("https://", "https://"), ("", ""),
    ])
    func hostOfIssuer(_ issuer: String, _ host: String) {
        #expect(ItemKey.host(of: issuer) == host)
    }

    @Test func validationNamesTheField() {
        var key = ItemKey(group: group, issuer: "https://i", clientID: "c", account: "a", kind: "tokens")
        #expect(throws: Never.self) { try key.validate() }
        key.account = ""
        #expect(throws: SecretStoreError.invalidKey(field: "account", reason: "it is empty")) { try key.validate() }
        key.account = "a\nb"
        #expect(throws: SecretStoreError.invalidKey(field: "account", reason: "it contains a control character")) {
            try key.validate()
        }
        key.account = "a"
        key.issuer = String(repeating: "x", count: 1025)
        #expect(throws: SecretStoreError.invalidKey(field: "issuer", reason: "it is longer than 1024 bytes")) {
            try key.validate()
        }
    }

    @Test func queryMatchesOnlyTheFiltersThatAreSet() throws {
        let key = ItemKey(group: group, issuer: "i", clientID: "c", account: "a", kind: "tokens")
        #expect(ItemQuery(group: group).matches(key))
        #expect(ItemQuery(group: group, account: "a").matches(key))
        #expect(!ItemQuery(group: group, account: "b").matches(key))
        #expect(!ItemQuery(group: try SecretGroup("other")).matches(key))
        #expect(ItemQuery(key).matches(key))
    }
}
