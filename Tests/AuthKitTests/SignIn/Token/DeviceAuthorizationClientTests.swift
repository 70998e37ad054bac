import Foundation
import Synchronization
import Testing
@testable import AuthKit

@Suite("DeviceAuthorizationClient")
struct DeviceAuthorizationClientTests {
    /// A device endpoint and a token endpoint that answer from a script of token responses.
    func server(tokenAnswers: [StubHTTPServer.Action], deviceBody: String? = nil) async throws -> StubHTTPServer {
        let answers = Mutex(tokenAnswers)
        return try await StubHTTPServer.start { request in
            if request.path == "/device" {
                return .json(
                    200,
                    deviceBody
                        ?? #"{"device_code":"DC-1","user_code":"WDJB-MJHT","verification_uri":"https://example.com/device","verification_uri_complete":"https://example.com/device?user_code=WDJB-MJHT","expires_in":1800,"interval":5}"#
                )
            }
            return answers.withLock { $0.isEmpty ? .json(500, "{}") : $0.removeFirst() }
        }
    }

    func client(_ server: StubHTTPServer, sleeps: SleepLog) -> DeviceAuthorizationClient {
        let tokens = TokenEndpointClient(endpoint: server.baseURL.appendingPathComponent("token"), client: OAuthClient(clientID: "cid"))
        return DeviceAuthorizationClient(endpoint: server.baseURL.appendingPathComponent("device"), tokenClient: tokens) { duration in
            sleeps.add(duration)
        }
    }

    @Test("pending and slow_down keep polling at the advertised, then increased, interval until tokens arrive")
    func polling() async throws {
        let server = try await server(tokenAnswers: [
            .json(400, #"{"error":"authorization_pending"}"#),
            .json(400, #"{"error":"slow_down"}"#),
            .json(400, #"{"error":"authorization_pending"}"#),
            .json(200, TokenEndpointClientTests.tokens),
        ])
        defer { Task { await server.stop() } }
        let sleeps = SleepLog()
        let device = client(server, sleeps: sleeps)
        let authorization = try await device.start(scopes: ["openid", "offline_access"])
        #expect(authorization.userCode == "WDJB-MJHT")
        #expect(authorization.verificationURIComplete?.absoluteString == "https://example.com/device?user_code=WDJB-MJHT")
        #expect(!"\(authorization)".contains("DC-1"))
        let tokens = try await device.waitForTokens(authorization)
        #expect(tokens.accessToken == "AT-123")
        #expect(sleeps.all == [.seconds(5), .seconds(5), .seconds(10), .seconds(10)])
        let poll = try #require(FormEncoding.decode(server.requests[1].bodyText))
        #expect(poll.contains { $0.name == "grant_type" && $0.value == "urn:ietf:params:oauth:grant-type:device_code" })
        #expect(poll.contains { $0.name == "device_code" && $0.value == "DC-1" })
    }

    @Test("the provider's interval is kept up to ten minutes (RFC 8628's MUST), a sillier one bounded there")
    func longIntervals() async throws {
        for (asked, kept) in [(120, 120), (600, 600), (86_400, 600), (0, 1)] {
            let body =
                #"{"device_code":"DC-1","user_code":"WDJB-MJHT","verification_uri":"https://example.com/device","expires_in":1800,"interval":"#
                + "\(asked)}"
            let server = try await server(tokenAnswers: [], deviceBody: body)
            defer { Task { await server.stop() } }
            let authorization = try await client(server, sleeps: SleepLog()).start(scopes: ["openid"])
            #expect(authorization.interval == .seconds(kept), "interval \(asked)")
        }
    }

    @Test("expired_token and access_denied end the wait with their own errors")
    func terminalErrors() async throws {
        for (code, expected) in [("expired_token", DeviceFlowError.expired), ("access_denied", .denied)] {
            let server = try await server(tokenAnswers: [.json(400, #"{"error":"\#(code)"}"#)])
            let device = client(server, sleeps: SleepLog())
            let authorization = try await device.start(scopes: ["openid"])
            await #expect(throws: expected) { _ = try await device.waitForTokens(authorization) }
            await server.stop()
        }
    }

    @Test("Google's verification_url spelling is understood; answers without a user code are refused")
    func responseShapes() async throws {
        let google = try await server(
            tokenAnswers: [],
            deviceBody: #"{"device_code":"d","user_code":"ABC","verification_url":"https://www.google.com/device","expires_in":"1800"}"#)
        let authorization = try await client(google, sleeps: SleepLog()).start(scopes: ["openid"])
        #expect(authorization.verificationURI.absoluteString == "https://www.google.com/device")
        #expect(authorization.interval == .seconds(5))
        await google.stop()

        let broken = try await server(
            tokenAnswers: [], deviceBody: #"{"device_code":"d","verification_uri":"https://x/device","expires_in":60}"#)
        await #expect(throws: DeviceFlowError.self) { _ = try await client(broken, sleeps: SleepLog()).start(scopes: ["openid"]) }
        await broken.stop()
    }
}

final class SleepLog: Sendable {
    private let durations = Mutex<[Duration]>([])
    func add(_ duration: Duration) { durations.withLock { $0.append(duration) } }
    var all: [Duration] { durations.withLock { $0 } }
}
