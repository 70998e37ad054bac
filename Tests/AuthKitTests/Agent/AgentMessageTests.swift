import Testing

@testable import AuthKit

/// `AgentMessage` and `AgentRequest` (Sources/AuthKit/Agent/AgentMessage.swift): each operation
/// decoded at the socket into its case with its required fields, or refused as a bad request;
/// encoded back to the same line; the request and answer limits in one place.
@Suite struct AgentMessageTests {
    static func decode(_ text: String) -> Result<AgentRequest, AgentFailure> {
        do throws(AgentFailure) { return .success(try AgentMessage.decodeRequest(from: Array(text.utf8))) } catch { return .failure(error) }
    }

    @Test func everyOperationDecodesToItsCaseAndBack() throws {
        let token = AgentTokenRequest(
            group: "g", storage: .kernelKeyring, account: "ada", scopes: ["a", "b"], minTTL: 300, program: "/usr/bin/curl")
        let requests: [AgentRequest] = [
            .hello, .token(token), .idToken(AgentTokenRequest(group: "g")), .rejected(group: "g", storage: nil, token: "at-1"),
            .forget(group: "g"), .stop, .log(since: 7, group: nil), .log(since: 0, group: "g"), .stats, .open(key: "k"),
        ]
        for request in requests {
            let line = AgentMessage.encode(request)
            #expect(line.last == 0x0A)
            #expect(try Self.decode(String(decoding: line.dropLast(), as: UTF8.self)).get() == request)
        }
        #expect(try Self.decode(#"{"v":1,"op":"token","group":"g"}"#).get() == .token(AgentTokenRequest(group: "g", minTTL: 60)))
    }

    @Test(
        "each operation's required members, ranges and the version, or a bad request",
        arguments: [
            (#"{"v":1,"op":"token"}"#, "needs a group"), (#"{"v":1,"op":"id_token","group":""}"#, "needs a group"),
            (#"{"v":1,"op":"forget"}"#, "needs a group"), (#"{"v":1,"op":"rejected","group":"g"}"#, "needs the token"),
            (#"{"v":1,"op":"rejected","token":"t"}"#, "needs a group"), (#"{"v":1,"op":"token","group":"g","min_ttl":-1}"#, "min_ttl"),
            (#"{"v":1,"op":"token","group":"g","min_ttl":86401}"#, "min_ttl"), (#"{"v":2,"op":"hello"}"#, "protocol version 2"),
            (#"{"v":1,"op":"open"}"#, "needs the forward's key"), (#"{"v":1,"op":"steal"}"#, "not a protocol message"),
            (#"{"v":1,"op":"token","group":"g","storage":"floppy"}"#, "not a protocol message"),
        ])
    func badRequests(_ line: String, _ words: String) {
        guard case .failure(let failure) = Self.decode(line) else {
            Issue.record("accepted: \(line)")
            return
        }
        #expect(failure.code == .badRequest && failure.message.contains(words), "\(failure.message)")
    }

    /// An agent older than narrowing ignores `resources` and answers fewer scopes with the
    /// sign-in's own token: a client that asked for them does not take that answer for the
    /// narrow token (it reads the store, which narrows and checks).
    @Test func anAnswerThatIsNotTheNarrowTokenAskedForIsNotTaken() {
        func answer(scopes: [String], resources: [String]?, narrowing: Bool? = nil) -> AgentResponse {
            var response = AgentResponse(ok: true)
            (response.token, response.expiresAt, response.account) = ("t", 2_000_000_000, "ada")
            (response.scopes, response.resources, response.narrowing) = (scopes, resources, narrowing)
            return response
        }
        let api = "https://api.example/"
        let cases: [(AgentTokenRequest, AgentResponse, Bool)] = [
            (AgentTokenRequest(group: "g", resources: [api]), answer(scopes: ["read"], resources: nil), false),
            (AgentTokenRequest(group: "g", resources: [api]), answer(scopes: ["read"], resources: [api]), true),
            (AgentTokenRequest(group: "g", scopes: ["read"]), answer(scopes: ["read", "write"], resources: nil), false),
            (AgentTokenRequest(group: "g", scopes: ["read"]), answer(scopes: ["read"], resources: nil), true),
            // Other scopes than the sign-in's (a provider's own names for them), and a forward
            // that filled in its resources where none were asked: as answered.
            (AgentTokenRequest(group: "g", scopes: ["api://x/.default"]), answer(scopes: ["api://x/read"], resources: nil), true),
            (AgentTokenRequest(group: "g"), answer(scopes: ["read"], resources: [api]), true),
            // An agent that narrows checked its answer itself: more scopes than asked are the
            // provider's answer to other scopes (Entra names every consented one), taken. Its
            // resources must still be the ones asked.
            (AgentTokenRequest(group: "g", scopes: ["read"]), answer(scopes: ["read", "write"], resources: nil, narrowing: true), true),
            (AgentTokenRequest(group: "g", resources: [api]), answer(scopes: ["read"], resources: nil, narrowing: true), false),
        ]
        for (asked, response, taken) in cases {
            #expect((AgentRoute.checked(response, asked: asked) != nil) == taken, "\(asked) \(response)")
        }
        // This agent's answers say it narrows, on the wire.
        let token = AgentStateMachine.Token(
            value: "t", expiresAt: 2_000_000_000, account: "ada", scopes: ["read", "write"], refreshed: false)
        let line = AgentMessage.encode(AgentStateMachine.answer(token))
        let decoded = try? AgentMessage.decodeAnswer(from: line.dropLast())
        #expect(decoded?.narrowing == true)
        #expect(decoded.flatMap { AgentRoute.checked($0, asked: AgentTokenRequest(group: "g", scopes: ["read"])) } != nil)
    }

    @Test func theLimitsAreTheWiresOwn() {
        let long =
            #"{"v":1,"op":"token","group":"g","account":""# + String(repeating: "a", count: AgentMessage.maximumRequestBytes) + #""}"#
        guard case .failure(let failure) = Self.decode(long) else {
            Issue.record("a request over the limit was read")
            return
        }
        #expect(failure.message.contains("longer than \(AgentMessage.maximumRequestBytes) bytes"))
        var answer = AgentResponse(ok: true)
        answer.token = String(repeating: "t", count: 40_000)
        let line = AgentMessage.encode(answer)
        #expect(line.count > AgentMessage.maximumRequestBytes && line.count < AgentMessage.maximumAnswerBytes)
        #expect((try? AgentMessage.decodeAnswer(from: line.dropLast())) == answer, "an answer may be longer than a request")
        #expect(AgentLineDecoder.maximumRequestBytes == AgentMessage.maximumRequestBytes)
    }
}
