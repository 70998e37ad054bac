import Testing
@testable import SecretStore

@Suite struct ItemSchemaTests {
    let group = try! SecretGroup("g")
    let full = ["issuer": "i", "client_id": "c", "account": "a", "kind": "tokens", "format": "1"]

    @Test func schemaNameAndAttributesAreTheDocumentedOnes() {
        #expect(ItemSchema.name == "io.github.authkit.Token")
        #expect(ItemSchema.keyAttributes == ["group", "issuer", "client_id", "account", "kind"])
        let key = ItemKey(group: group, issuer: "i", clientID: "c", account: "a", kind: "tokens")
        #expect(ItemSchema.attributes(for: key).map(\.0) == ["group", "issuer", "client_id", "account", "kind", "format"])
    }

    @Test func soundItem() {
        let (key, problem) = ItemSchema.key(from: full, group: group, secret: Array("{}".utf8))
        #expect(problem == nil)
        #expect(key == ItemKey(group: group, issuer: "i", clientID: "c", account: "a", kind: "tokens"))
    }

    @Test func problemsAreNamed() {
        var attributes = full
        attributes["account"] = nil
        #expect(ItemSchema.key(from: attributes, group: group, secret: nil).1 == .missingAttributes(["account"]))
        #expect(ItemSchema.key(from: full, group: group, secret: [0xFF, 0xFE]).1 == .secretNotText)
        attributes = full
        attributes["format"] = "2"
        #expect(ItemSchema.key(from: attributes, group: group, secret: nil).1 == .unsupportedFormat("2"))
    }

    @Test func utf8Check() {
        #expect(ItemSchema.isUTF8(Array("héllo ✓".utf8)))
        #expect(!ItemSchema.isUTF8([0xC3]))
        #expect(!ItemSchema.isUTF8([0xED, 0xA0, 0x80]))  // a surrogate
    }
}
