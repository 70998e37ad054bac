import AuthKitCore
import Testing

@testable import AuthKit
@testable import SecretStore

/// The lean client's side of the agent protocol (`AgentTokenQuery`, `AgentTokenAnswer` and
/// `StoreNames` of AuthKitCore) against authkit's own (`AgentMessage`, `AgentRoute`). The
/// request line it writes is the request authkit writes; an answer it reads, authkit reads the
/// same, and it hands out a token only when authkit would; and authkit takes from
/// `AUTHKIT_AGENT_ANSWER` a refusal of its own process and nothing else.
@Suite struct AgentWireParityTests {
    struct Asked {
        var account: String?
        var scopes: [String]
        var resources: [String]
        var program: String?
    }

    @Test func theLeanRequestLineIsAuthkitsRequest() throws {
        let asked = [
            Asked(account: nil, scopes: [], resources: []),
            Asked(account: "ada@example.com", scopes: ["a", "b c"], resources: ["https://api.example.com/x"]),
            Asked(account: nil, scopes: [], resources: [], program: "/usr/bin/curl"),
        ]
        for store in StoreKinds.builtIn.map { $0.name } {
            for one in asked {
                let query = AgentTokenQuery(
                    group: "com.example.g", storage: store, account: one.account, scopes: one.scopes, resources: one.resources, minTTL: 300,
                    program: one.program)
                #expect(query.line.last == 0x0A)
                let decoded = try AgentMessage.decodeRequest(from: Array(query.line.dropLast()))
                let expected = AgentTokenRequest(
                    group: "com.example.g", storage: StorageChoice(rawValue: store), account: one.account, scopes: one.scopes,
                    resources: one.resources, minTTL: 300, program: one.program)
                #expect(decoded == AgentRequest.token(expected))
                // And authkit's own line for it says the same.
                #expect(
                    try AgentMessage.decodeRequest(from: Array(AgentMessage.encode(AgentRequest.token(expected)).dropLast())) == decoded)
            }
        }
    }

    @Test func theStoreNamesAreTheStoreKinds() {
        #expect(StoreNames.all == StoreKinds.builtIn.map { $0.name })
        #expect(StoreNames.plainFile == PlainFileStore.name && StoreNames.secretService == SecretServiceStore.name)
    }

    /// Answer lines; the first eight the lean client reads, the rest it leaves to authkit.
    static let answers = [
        #"{"v":1,"ok":true,"token":"at-1","expires_at":2000000000,"account":"ada"}"#,
        #"{"v":1,"ok":true,"token":"at-1","expires_at":2000000000,"account":"ada","scopes":["a","b"],"narrowing":true,"resources":["https://a"]}"#,
        #"{"v":1,"ok":true,"token":"at-1","expires_at":2000000000,"account":"ada","scopes":["a","b"]}"#,
        #"{"v":1,"ok":true,"token":"at 1","expires_at":2000000000,"account":"ada"}"#,
        #"{"v":1,"ok":true,"token":"at-1","expires_at":0,"account":"ada"}"#,
        #"{"v":1,"ok":true,"token":"at-1","expires_at":2000000000,"account":"","refreshed":true,"token_type":"DPoP"}"#,
        #"{"v":1,"ok":true,"token":"at-1","expires_at":2000000000,"account":"ada","token_type":null}"#,
        #"{"v":1,"ok":false,"error":{"code":"not_signed_in","message":"nobody is signed in","category":"login"}}"#,
        #"{"v":1,"ok":true,"token":"at-1","expires_at":"2000000000","account":"ada"}"#,
        #"{"v":1,"ok":true,"token":"at-1","expires_at":2000000000,"account":"ada","proof":"x.y.z"}"#,
        #"{"v":2,"ok":true,"token":"at-1","expires_at":2000000000,"account":"ada"}"#,
        #"{"v":1,"ok":true,"token":"at-1","expires_at":2000000000,"account":"ada","unknown":1}"#,
        #"{"v":1,"ok":true,"token":"at-1","expires_at":2000000000,"account":"ada","error":{"code":"refused"}}"#,
    ]

    @Test(arguments: answers, [AgentTokenRequest(group: "g"), AgentTokenRequest(group: "g", scopes: ["a"], resources: ["https://a"])])
    func anAnswerTheLeanClientReadsAuthkitReadsTheSame(_ text: String, asked: AgentTokenRequest) throws {
        let line = Array(text.utf8)
        let index = try #require(Self.answers.firstIndex(of: text))
        guard let lean = AgentTokenAnswer(line: line) else {
            #expect(index >= 8, "the lean client does not read \(text)")
            return
        }
        #expect(index < 8, "the lean client reads \(text)")
        let full = try AgentMessage.decodeAnswer(from: line)
        #expect(full.version == 1 && full.ok == lean.ok && full.token == lean.token && full.expiresAt == lean.expiresAt)
        #expect(full.account == lean.account && full.scopes == lean.scopes && full.resources == lean.resources)
        #expect((full.error != nil) == lean.failed)
        #expect((AgentRoute.checked(full, asked: asked) != nil) == lean.usable(askedScopes: asked.scopes, askedResources: asked.resources))
    }

    @Test func onlyARefusalIsTakenFromTheEnvironmentAndOnlyByItsOwnProcess() {
        func handed(_ text: String, pid: Int32 = 4242) -> AgentResponse? {
            AgentRoute.handedRefusal(["AUTHKIT_AGENT_ANSWER": "4242 " + text], pid: pid)
        }
        let refusal = #"{"v":1,"ok":false,"error":{"code":"refused","message":"not for this program","category":"usage"}}"#
        #expect(handed(refusal)?.error?.code == .refused)
        // Inherited from another process (its pid), or without one: not taken.
        #expect(handed(refusal, pid: 4243) == nil)
        #expect(AgentRoute.handedRefusal(["AUTHKIT_AGENT_ANSWER": refusal], pid: 4242) == nil)
        #expect(handed(#"{"v":1,"ok":true,"token":"at-1","expires_at":2000000000,"account":"ada"}"#) == nil)
        #expect(handed(#"{"v":1,"ok":false,"token":"at-1","error":{"code":"refused","message":"m","category":"usage"}}"#) == nil)
        #expect(handed(#"{"v":1,"ok":false}"#) == nil)
        #expect(handed(#"{"v":2,"ok":false,"error":{"code":"refused","message":"m","category":"usage"}}"#) == nil)
        #expect(handed("not json") == nil)
        #expect(AgentRoute.handedRefusal([:]) == nil)
    }
}
