import AuthKitCore
import Testing

/// `GitCredentialRequest`: git's `key=value` request read as git writes it, and the answer.
@Suite struct GitCredentialRequestTests {
    @Test func readsTheKeysItUsesUpToTheBlankLine() throws {
        let request = try GitCredentialRequest(
            parsing:
                "protocol=HTTPS\r\nhost=example.com:8443\npath=a/b\nusername=ada\nwwwauth[]=Bearer x=y\ncapability[]=authtype\n\nhost=later\n"
        )
        #expect(request.scheme == "https" && request.host == "example.com:8443" && request.path == "a/b" && request.username == "ada")
        #expect(request.capabilities == ["authtype"] && request.password == nil)
        #expect(try GitCredentialRequest(parsing: "") == GitCredentialRequest(parsing: "\n"))
        #expect(throws: GitCredentialRequest.Malformed.self) { try GitCredentialRequest(parsing: "protocol https\n") }
        // A last line without its newline may end in a CR.
        #expect(try GitCredentialRequest(parsing: "host=a\r\nprotocol=https\r").scheme == "https")
        // After the blank line nothing is read, not even a malformed line.
        #expect(try GitCredentialRequest(parsing: "host=a\n\nnot a line\n").host == "a")
    }

    @Test func theRejectedTokenIsTheBearerCredentialOrThePassword() throws {
        #expect(try GitCredentialRequest(parsing: "password=p\n").rejectedToken == "p")
        #expect(try GitCredentialRequest(parsing: "password=p\nauthtype=Bearer\ncredential=c\n").rejectedToken == "c")
        #expect(try GitCredentialRequest(parsing: "password=p\nauthtype=Basic\ncredential=c\n").rejectedToken == "p")
    }

    @Test func answersBasicOrBearerAsGitAnnounced() throws {
        let basic = try GitCredentialRequest(parsing: "protocol=https\nhost=a\n")
        #expect(
            basic.answer(token: "t", expiresAt: 1_800_000_000, username: "u") == "username=u\npassword=t\npassword_expiry_utc=1800000000\n")
        let bearer = try GitCredentialRequest(parsing: "capability[]=authtype\nprotocol=https\nhost=a\n")
        #expect(
            bearer.answer(token: "t", expiresAt: 1_800_000_000, username: "u")
                == "capability[]=authtype\nauthtype=Bearer\ncredential=t\nephemeral=1\npassword_expiry_utc=1800000000\n")
        #expect(
            GitCredentialRequest.isOneLine("oauth2") && !GitCredentialRequest.isOneLine("a\nb")
                && !GitCredentialRequest.isOneLine("a\u{7F}"))
    }
}
