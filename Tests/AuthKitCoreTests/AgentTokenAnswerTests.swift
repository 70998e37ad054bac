import AuthKitCore
import Testing

/// `AgentTokenAnswer` (Sources/AuthKitCore/AgentTokenAnswer.swift): the agent's answer to a
/// token request read member by member, anything unexpected making no answer at all, and the
/// rules a token from the agent meets before any client hands it out.
@Suite struct AgentTokenAnswerTests {
    static func answer(_ text: String) -> AgentTokenAnswer? { AgentTokenAnswer(line: Array(text.utf8)) }

    @Test func aTokenAnswerIsRead() throws {
        let read = try #require(
            Self.answer(
                #"{"v":1,"ok":true,"token":"at-1","expires_at":2000000000,"account":"ada","scopes":["a"],"refreshed":false,"token_type":"DPoP","narrowing":true,"resources":null}"#
            ))
        #expect(read.ok && read.token == "at-1" && read.expiresAt == 2_000_000_000 && read.account == "ada")
        #expect(read.scopes == ["a"] && read.resources == nil && read.narrowing == true && read.tokenType == "DPoP" && !read.failed)
        #expect(read.usable(askedScopes: [], askedResources: []))
        let refusal = try #require(Self.answer(#"{"v":1,"ok":false,"error":{"code":"refused","message":"no","category":"usage"}}"#))
        #expect(!refusal.ok && refusal.failed && !refusal.usable(askedScopes: [], askedResources: []))
    }

    @Test(
        "anything but a token answer of protocol 1 is no answer",
        arguments: [
            "", "[]", #"{"ok":true}"#, #"{"v":2,"ok":true}"#, #"{"v":1}"#, #"{"v":1,"ok":"yes"}"#, #"{"v":1,"ok":true,"token":7}"#,
            #"{"v":1,"ok":true,"expires_at":"soon"}"#, #"{"v":1,"ok":true,"expires_at":1.5}"#, #"{"v":1,"ok":true,"scopes":"a"}"#,
            #"{"v":1,"ok":true,"scopes":[1]}"#, #"{"v":1,"ok":true,"proof":"x"}"#, #"{"v":1,"ok":true,"events":[]}"#,
            #"{"v":1,"ok":false,"error":"no"}"#, #"{"v":1,"ok":true,"v":1}"#, #"{"v":1,"ok":true} x"#,
        ])
    func notAnAnswer(_ text: String) {
        #expect(Self.answer(text) == nil)
    }

    @Test func aTokenIsHandedOutOnlyWhenItIsTheOneAskedFor() {
        func usable(
            token: String? = "at", expiresAt: Int64? = 2_000_000_000, account: String? = "ada", scopes: [String]? = nil,
            resources: [String]? = nil, narrowing: Bool? = nil, askedScopes: [String] = [], askedResources: [String] = []
        ) -> Bool {
            AgentTokenAnswer.usable(
                token: token, expiresAt: expiresAt, account: account, scopes: scopes, resources: resources, narrowing: narrowing,
                askedScopes: askedScopes, askedResources: askedResources)
        }
        #expect(usable())
        #expect(!usable(token: nil) && !usable(token: "a b") && !usable(token: "a\n") && !usable(token: ""))
        #expect(!usable(expiresAt: nil) && !usable(expiresAt: 0) && !usable(expiresAt: 100_000_000_000))
        #expect(!usable(account: nil) && !usable(account: ""))
        // Exactly the resources asked for.
        #expect(usable(resources: ["https://a"], askedResources: ["https://a"]))
        #expect(!usable(resources: ["https://b"], askedResources: ["https://a"]) && !usable(askedResources: ["https://a"]))
        // More scopes than asked: the sign-in's own token, unless the agent narrows.
        #expect(!usable(scopes: ["a", "b"], askedScopes: ["a"]))
        #expect(usable(scopes: ["a", "b"], narrowing: true, askedScopes: ["a"]))
        #expect(usable(scopes: ["a"], askedScopes: ["a"]))
    }
}
