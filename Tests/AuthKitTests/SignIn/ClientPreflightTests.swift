import Foundation
import StrictJSON
import Synchronization
import TestSupport
import Testing
@testable import AuthKit

/// The pre-flight at the token endpoint, against providers that answer it
/// differently. What each provider answered is recorded from the wire, so the tests show the
/// difference the rule is built on, not just its outcome.
@Suite("client pre-flight (before the browser opens)")
struct ClientPreflightFlowTests {
    /// Records the OAuth `error` of every token-endpoint answer, in order.
    final class TokenAnswers: Sendable {
        let errors = Mutex<[String]>([])
        var transport: InterceptingTransport {
            InterceptingTransport(afterSend: { request, response in
                guard request.url.path.hasSuffix("/token") || request.url.path.hasSuffix("/token/") else { return }
                let code: String
                if case .object(let members)? = try? JSONValue(parsing: response.body), case .string(let error)? = members["error"] {
                    code = error
                } else {
                    code = response.status == 200 ? "ok" : "HTTP \(response.status)"
                }
                self.errors.withLock { $0.append(code) }
            })
        }
        var all: [String] { errors.withLock { $0 } }
    }

    @Test("glewlwyd answers unauthorized_client to the pre-flight of a known client; the sign-in goes on and completes")
    func glewlwydKnownClient() async throws {
        let harness = try await SignInHarness.start(.glewlwyd)
        let answers = TokenAnswers()
        let result = await harness.run(harness.flow(try harness.profile(), transport: answers.transport))
        _ = try result.get()
        #expect(answers.all.count == 2, "the pre-flight and the exchange: \(answers.all)")
        #expect(answers.all.first == "unauthorized_client", "glewlwyd's answer to a made-up code: \(answers.all)")
        #expect(answers.all.last == "ok")
        try await harness.expectNoSecretsLeaked()
    }

    @Test("glewlwyd: an unknown client id is not told apart by the pre-flight, so the wait runs to the timeout and names the causes")
    func glewlwydUnknownClient() async throws {
        let harness = try await SignInHarness.start(.glewlwyd)
        let answers = TokenAnswers()
        var profile = try harness.profile()
        profile.clientID = "no-such-client"
        let result = await harness.run(harness.flow(profile, transport: answers.transport), mode: .noBrowser, timeout: .seconds(2))
        let error = try expectFailure(result)
        guard case .authorization(.noCallback(seconds: 2, clientID: "no-such-client", _)) = error else {
            Issue.record("expected the wait to run out, got \(error)")
            return
        }
        #expect(answers.all == ["unauthorized_client"], "\(answers.all)")
        #expect(try await harness.itemCount() == 0)
    }

    @Test("authlib answers invalid_client to an unknown client: the sign-in ends before the URL is shown")
    func authlibUnknownClient() async throws {
        let harness = try await SignInHarness.start()
        let answers = TokenAnswers()
        var profile = try harness.profile()
        profile.clientID = "no-such-client"
        let urls = Mutex(0)
        let result = await harness.run(harness.flow(profile, transport: answers.transport), mode: .noBrowser, timeout: .seconds(30)) {
            event in
            if case .openURL = event { urls.withLock { $0 += 1 } }
        }
        let error = try expectFailure(result)
        guard case .clientRejected(clientID: "no-such-client", code: "invalid_client", _) = error else {
            Issue.record("expected clientRejected, got \(error)")
            return
        }
        #expect(error.category == .configurationRejected)
        #expect(urls.withLock { $0 } == 0, "no URL was shown")
        #expect(answers.all == ["invalid_client"])
    }

    @Test("Entra's AADSTS700016 (application not found) in the description is a rejection whatever the code")
    func entraApplicationNotFound() {
        let answer = TokenEndpointError.oauth(
            code: "unauthorized_client",
            description: "AADSTS700016: Application with identifier 'x' was not found in the directory 'y'.", status: 400)
        guard case .clientRejected(_, "unauthorized_client", _)? = SignInFlow.clientRejection(answer, clientID: "x") else {
            Issue.record("AADSTS700016 was not taken as a rejection")
            return
        }
        #expect(
            SignInFlow.clientRejection(.oauth(code: "unauthorized_client", description: "bad code", status: 400), clientID: "x") == nil,
            "unauthorized_client alone is not a rejection in the pre-flight")
        #expect(
            SignInFlow.clientRejection(.oauth(code: "unauthorized_client", description: nil, status: 400), clientID: "x", exchange: true)
                != nil,
            "but it is at the real exchange")
        #expect(
            SignInFlow.clientRejection(.oauth(code: "invalid_grant", description: nil, status: 400), clientID: "x", exchange: true) == nil)
    }
}
