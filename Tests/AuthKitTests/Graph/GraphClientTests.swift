import Foundation
import Synchronization
import Testing
@testable import AuthKit

@Suite("GraphClient")
struct GraphClientTests {
    static func page(_ names: [String], next: String? = nil) -> String {
        let users = names.map {
            #"{"displayName":"\#($0)","userPrincipalName":"\#($0.lowercased())@contoso.example","mail":null,"businessPhones":["+1 555 0100"],"mobilePhone":null}"#
        }
        let link = next.map { #","@odata.nextLink":"\#($0)""# } ?? ""
        return #"{"@odata.context":"https://graph.microsoft.com/v1.0/$metadata#users","value":[\#(users.joined(separator: ","))]\#(link)}"#
    }

    final class TokenLog: Sendable {
        private let calls = Mutex<[Bool]>([])
        func source() -> GraphClient.AccessTokenSource {
            { [self] refresh in
                calls.withLock { $0.append(refresh) }
                return refresh ? "fresh-token" : "stale-token"
            }
        }
        var all: [Bool] { calls.withLock { $0 } }
    }

    func client(_ server: StubHTTPServer, tokens: TokenLog = TokenLog(), sleeps: SleepLog = SleepLog()) -> GraphClient {
        GraphClient(baseURL: server.baseURL.appendingPathComponent("v1.0"), sleep: { sleeps.add($0) }, accessToken: tokens.source())
    }

    @Test("quotes are doubled, so text cannot leave the literal")
    func literalEscaping() {
        #expect(ODataLiteral.string("O'Brien") == "'O''Brien'")
        #expect(ODataLiteral.string("x') or startswith(mail,'") == "'x'') or startswith(mail,'''")
        #expect(GraphClient.filter(for: "O'B").hasPrefix("startswith(displayName,'O''B') or startswith(givenName,'O''B')"))
    }

    @Test("the request carries the escaped filter, the selected fields and the bearer token")
    func requestShape() async throws {
        let server = try await StubHTTPServer.start { _ in .json(200, Self.page(["Seán O'Brien"])) }
        defer { Task { await server.stop() } }
        let users = try await client(server).searchUsers("O'Brien", top: 5)
        #expect(users.map(\.displayName) == ["Seán O'Brien"])
        #expect(users.first?.businessPhones == ["+1 555 0100"])
        let request = try #require(server.requests.first)
        let rawQuery = try #require(request.query)
        let query = try #require(FormEncoding.decode(rawQuery))
        let fields = Dictionary(uniqueKeysWithValues: query.map { ($0.name, $0.value) })
        #expect(request.path == "/v1.0/users")
        #expect(fields["$filter"] == GraphClient.filter(for: "O'Brien"))
        #expect(fields["$select"] == "displayName,userPrincipalName,mail,businessPhones,mobilePhone")
        #expect(fields["$top"] == "5")
        #expect(request.header("Authorization") == "Bearer stale-token")
    }

    @Test("paging follows @odata.nextLink on the same host until top results")
    func paging() async throws {
        let server = try await StubHTTPServer.start { request in
            let base = "http://\(request.header("Host") ?? "")/v1.0/users"
            switch request.query?.contains("skiptoken") {
            case true: return .json(200, Self.page(["C", "D"], next: base + "?$skiptoken=3"))
            default: return .json(200, Self.page(["A", "B"], next: base + "?$skiptoken=2"))
            }
        }
        defer { Task { await server.stop() } }
        let users = try await client(server).searchUsers("a", top: 3)
        #expect(users.map(\.displayName) == ["A", "B", "C"])
        #expect(server.requests.count == 2)
    }

    @Test("a nextLink to another host is refused and gets no token")
    func foreignNextLink() async throws {
        let server = try await StubHTTPServer.start { _ in
            .json(200, Self.page(["A"], next: "https://evil.example/v1.0/users?$skiptoken=2"))
        }
        defer { Task { await server.stop() } }
        await #expect(throws: GraphError.foreignNextLink("https://evil.example")) { _ = try await client(server).searchUsers("a", top: 10) }
        #expect(server.requests.count == 1)
    }

    @Test("401 refreshes the token once and retries; a second 401 is an error")
    func unauthorized() async throws {
        let calls = Mutex(0)
        let server = try await StubHTTPServer.start { request in
            calls.withLock { $0 += 1 }
            return request.header("Authorization") == "Bearer fresh-token"
                ? .json(200, Self.page(["A"]))
                : .json(401, #"{"error":{"code":"InvalidAuthenticationToken","message":"Access token has expired or is not yet valid."}}"#)
        }
        defer { Task { await server.stop() } }
        let tokens = TokenLog()
        _ = try await client(server, tokens: tokens).searchUsers("a")
        #expect(tokens.all == [false, true])

        let always401 = try await StubHTTPServer.start { _ in
            .json(401, #"{"error":{"code":"InvalidAuthenticationToken","message":"nope"}}"#)
        }
        defer { Task { await always401.stop() } }
        await #expect(throws: GraphError.unauthorized(message: "nope")) { _ = try await client(always401).searchUsers("a") }
        #expect(always401.requests.count == 2)
    }

    @Test("403 names the missing permission")
    func forbidden() async throws {
        let server = try await StubHTTPServer.start { _ in
            .json(403, #"{"error":{"code":"Authorization_RequestDenied","message":"Insufficient privileges to complete the operation."}}"#)
        }
        defer { Task { await server.stop() } }
        await #expect(
            throws: GraphError.forbidden(
                missingPermission: "User.ReadBasic.All", message: "Insufficient privileges to complete the operation.")
        ) {
            _ = try await client(server).searchUsers("a")
        }
    }

    @Test("429 and 503 wait for Retry-After, within bounds")
    func throttling() async throws {
        let calls = Mutex(0)
        let server = try await StubHTTPServer.start { _ in
            let call = calls.withLock {
                $0 += 1; return $0
            }
            switch call {
            case 1: return .json(429, #"{"error":{"code":"TooManyRequests"}}"#, headers: [("Retry-After", "2")])
            case 2: return .json(503, "{}", headers: [("Retry-After", "1")])
            default: return .json(200, Self.page(["A"]))
            }
        }
        defer { Task { await server.stop() } }
        let sleeps = SleepLog()
        _ = try await client(server, sleeps: sleeps).searchUsers("a")
        #expect(sleeps.all == [.seconds(2), .seconds(1)])

        let tooLong = try await StubHTTPServer.start { _ in .json(429, "{}", headers: [("Retry-After", "3600")]) }
        defer { Task { await tooLong.stop() } }
        await #expect(throws: GraphError.throttled(retryAfterSeconds: 3600)) { _ = try await client(tooLong).searchUsers("a") }
    }

    @Test("Retry-After: seconds or an HTTP date")
    func retryAfter() {
        let now = Date(timeIntervalSince1970: 784_111_770)  // Sun, 06 Nov 1994 08:49:30 GMT
        #expect(RetryAfter.parse("120", now: now) == .seconds(120))
        #expect(RetryAfter.parse("Sun, 06 Nov 1994 08:49:37 GMT", now: now) == .seconds(7))
        #expect(RetryAfter.parse("-1", now: now) == nil)
        #expect(RetryAfter.parse("soon", now: now) == nil)
        // A year out of range is no date (the arithmetic would overflow and trap).
        #expect(RetryAfter.parse("Sun, 06 Nov 300000000000 08:49:37 GMT", now: now) == nil)
        #expect(RetryAfter.parse("Sun, 06 Nov -9223372036854775807 08:49:37 GMT", now: now) == nil)
    }

    @Test(
        "empty, control-character and oversized search texts are refused before any request",
        arguments: ["", "  ", "a\u{1b}[2J", String(repeating: "x", count: 300)])
    func invalidText(_ text: String) async throws {
        let server = try await StubHTTPServer.start { _ in .json(200, Self.page([])) }
        defer { Task { await server.stop() } }
        await #expect(throws: GraphError.self) { _ = try await client(server).searchUsers(text) }
        #expect(server.requests.isEmpty)
    }
}
