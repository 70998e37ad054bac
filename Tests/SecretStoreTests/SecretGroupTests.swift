import Testing
@testable import SecretStore

@Suite struct SecretGroupTests {
    @Test(arguments: ["com.example.shared", "a", "com.example-team.shared_tools", "0x.y", String(repeating: "a", count: 255)])
    func acceptsReverseDNSNames(_ name: String) throws {
        #expect(try SecretGroup(name).name == name)
    }

    @Test(arguments: [
        ("", "empty"), ("com example", "a space"), ("com/example", "'/'"), (".hidden", "start with a letter or digit"),
        ("..", "start with a letter or digit"), ("-x", "start with a letter or digit"), ("tab\there", "control"),
        ("café.example", "non-ASCII"), (String(repeating: "a", count: 256), "longer than 255"),
    ])
    func rejectsOthers(_ name: String, _ reason: String) {
        #expect {
            try SecretGroup(name)
        } throws: { error in
            guard case .invalidGroup(_, let why) = error as? SecretStoreError else { return false }
            return why.contains(reason)
        }
    }
}
