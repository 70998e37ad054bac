import Foundation
import Testing
@testable import AuthKit

@Suite("CurlHTTPTransport")
struct CurlHTTPTransportTests {
    let transport = CurlHTTPTransport()

    @Test("GET returns status, headers (case-insensitive) and body")
    func getReturnsResponse() async throws {
        let server = try await StubHTTPServer.start { request in
            .respond(
                status: 200,
                headers: [("Content-Type", "application/json; charset=utf-8"), ("X-Twice", "a"), ("x-twice", "b")],
                body: Array("{\"path\":\"\(request.path)\"}".utf8))
        }
        defer { Task { await server.stop() } }
        let response = try await transport.send(HTTPRequest(url: server.baseURL.appendingPathComponent("hello")))
        #expect(response.status == 200)
        #expect(response.mediaType == "application/json")
        #expect(response.headers.values("X-TWICE") == ["a", "b"])
        #expect(String(decoding: response.body, as: UTF8.self) == "{\"path\":\"/hello\"}")
        #expect(server.requests.first?.header("User-Agent")?.hasPrefix("authkit/") == true)
    }

    @Test("a form POST is form-encoded and carries its fields exactly")
    func formPost() async throws {
        let server = try await StubHTTPServer.start { _ in .json(200, "{}") }
        defer { Task { await server.stop() } }
        let fields = [("grant_type", "authorization_code"), ("redirect_uri", "http://127.0.0.1:5/cb?x=1&y=2"), ("note", "a b+c/é")]
        _ = try await transport.send(.form(server.baseURL.appendingPathComponent("token"), fields: fields))
        let received = try #require(server.requests.first)
        #expect(received.method == "POST")
        #expect(received.header("Content-Type") == "application/x-www-form-urlencoded")
        #expect(received.header("Expect") == nil)
        let decoded = try #require(FormEncoding.decode(received.bodyText))
        #expect(decoded.map(\.name) == fields.map(\.0))
        #expect(decoded.map(\.value) == fields.map(\.1))
    }

    @Test("any method goes as named: with a body as sent, without one with no body and no content type")
    func otherMethods() async throws {
        let server = try await StubHTTPServer.start { _ in .json(200, "{}") }
        defer { Task { await server.stop() } }
        for name in ["PATCH", "PUT", "DELETE", "HEAD", "OPTIONS"] {
            let method = try #require(HTTPRequest.Method(rawValue: name))
            let body: [UInt8]? = name == "PATCH" || name == "PUT" ? Array(#"{"a":1}"#.utf8) : nil
            var headers = HTTPHeaders()
            if body != nil { headers.add("Content-Type", "application/json") }
            let response = try await transport.send(
                HTTPRequest(method: method, url: server.baseURL.appendingPathComponent("x"), headers: headers, body: body))
            #expect(response.status == 200)
            let received = try #require(server.requests.last)
            #expect(received.method == name)
            #expect(received.body == (body ?? []), "\(name)")
            #expect(received.header("Content-Type") == (body == nil ? nil : "application/json"), "\(name)")
        }
        #expect(HTTPRequest.Method(rawValue: "GE T") == nil && HTTPRequest.Method(rawValue: "") == nil)
        #expect(HTTPRequest.Method(rawValue: "M-SEARCH")?.rawValue == "M-SEARCH")
    }

    @Test("redirects are returned, never followed")
    func redirectsNotFollowed() async throws {
        let server = try await StubHTTPServer.start { request in
            request.path == "/start"
                ? .respond(status: 302, headers: [("Location", "/elsewhere")])
                : .text(200, "followed")
        }
        defer { Task { await server.stop() } }
        let response = try await transport.send(HTTPRequest(url: server.baseURL.appendingPathComponent("start")))
        #expect(response.status == 302)
        #expect(response.headers["location"] == "/elsewhere")
        #expect(server.requests.count == 1)
    }

    @Test("a body over the limit is an error, not a truncated response")
    func responseTooLarge() async throws {
        let server = try await StubHTTPServer.start { _ in .respond(status: 200, body: Array(repeating: 0x41, count: 10_000)) }
        defer { Task { await server.stop() } }
        await #expect(throws: HTTPError.responseTooLarge(host: server.baseURL.redactedOrigin, limit: 1000)) {
            _ = try await transport.send(HTTPRequest(url: server.baseURL, maxResponseBytes: 1000))
        }
    }

    @Test("headers over 256 KiB are an error too, whatever libcurl the system has")
    func headersTooLarge() async throws {
        let many = (0..<300).map { ("X-Filler-\($0)", String(repeating: "a", count: 1000)) }
        let server = try await StubHTTPServer.start { _ in .respond(status: 200, headers: many) }
        defer { Task { await server.stop() } }
        do {
            _ = try await transport.send(HTTPRequest(url: server.baseURL))
            Issue.record("300 KB of headers were taken")
        } catch {
            guard case .responseTooLarge = error else { Issue.record("\(error)"); return }
        }
        let few = try await StubHTTPServer.start { _ in .respond(status: 200, headers: Array(many.prefix(200))) }
        defer { Task { await few.stop() } }
        #expect(try await transport.send(HTTPRequest(url: few.baseURL)).status == 200)
    }

    @Test("a server that does not answer in time gives timedOut")
    func timeout() async throws {
        let server = try await StubHTTPServer.start { _ in .delay(milliseconds: 5_000, then: .text(200, "late")) }
        defer { Task { await server.stop() } }
        await #expect(throws: HTTPError.timedOut(host: server.baseURL.redactedOrigin, seconds: 1)) {
            _ = try await transport.send(HTTPRequest(url: server.baseURL, timeout: .milliseconds(300)))
        }
    }

    @Test("connection refused is a connection failure that is safe to retry")
    func connectionRefused() async throws {
        // Bind and close a listener to find a port nobody listens on.
        let server = try await StubHTTPServer.start { _ in .text(200, "") }
        let url = server.baseURL
        await server.stop()
        do {
            _ = try await transport.send(HTTPRequest(url: url, timeout: .seconds(5)))
            Issue.record("expected a connection failure")
        } catch {
            guard case .cannotConnect = error else { Issue.record("unexpected \(error)"); return }
            #expect(error.isSafeToRetry)
        }
    }

    @Test("a connection dropped after the request was sent is not safe to retry")
    func connectionDropped() async throws {
        let server = try await StubHTTPServer.start { _ in .closeConnection }
        defer { Task { await server.stop() } }
        do {
            _ = try await transport.send(.form(server.baseURL, fields: [("code", "x")]))
            Issue.record("expected a failure")
        } catch {
            guard case .connectionLost = error else { Issue.record("unexpected \(error)"); return }
            #expect(!error.isSafeToRetry)
        }
    }

    @Test("cancelling the task aborts the transfer")
    func cancellation() async throws {
        let server = try await StubHTTPServer.start { _ in .delay(milliseconds: 10_000, then: .text(200, "late")) }
        defer { Task { await server.stop() } }
        let task = Task { try await transport.send(HTTPRequest(url: server.baseURL, timeout: .seconds(30))) }
        try await Task.sleep(for: .milliseconds(200))
        task.cancel()
        await #expect(throws: HTTPError.cancelled) { _ = try await task.value }
    }

    @Test("only http and https URLs are sent")
    func rejectsOtherSchemes() async throws {
        await #expect(throws: HTTPError.self) {
            _ = try await transport.send(HTTPRequest(url: URL(string: "file:///etc/passwd")!))
        }
    }

    /// The transport itself applies the endpoint policy to every request,
    /// so a URL from anywhere — the stored record, a nextLink — cannot carry a secret over
    /// plain http to another host; refused before any connection, the URL shown encoded.
    @Test(
        "plain http to a non-loopback host is refused before connecting",
        arguments: [
            "http://evil.example/token", "http://10.0.0.1/token", "http://%31%32%37.0.0.1/token", "http://127.0.0.1.evil.example/t",
            "https://user:pw@login.example.com/t", "http://evil.example/%1B%5D52;c;eA==%07",
        ])
    func refusesPlainHTTPElsewhere(_ text: String) async throws {
        let url = try #require(URL(string: text))
        do {
            _ = try await transport.send(HTTPRequest(method: .post, url: url, body: Array("refresh_token=secret".utf8)))
            Issue.record("sent to \(text)")
        } catch {
            guard case .invalidURL(let message) = error else {
                Issue.record("expected invalidURL, got \(error)")
                return
            }
            #expect(!message.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F })
            #expect(!message.contains("secret"))
        }
    }

    @Test("loopback http is still allowed (local providers)")
    func allowsLoopbackHTTP() async throws {
        for host in ["127.0.0.1", "[::1]", "localhost"] {
            // Nothing listens on port 9: a connection failure, not a refused URL.
            let url = try #require(URL(string: "http://\(host):9/x"))
            do {
                _ = try await transport.send(HTTPRequest(url: url, timeout: .seconds(5)))
            } catch {
                if case .invalidURL = error { Issue.record("\(host) refused as a URL: \(error)") }
            }
        }
    }

    @Test("print, dump and interpolation of a request, its headers or a response show no header value, query or body")
    func noSecretInADescription() throws {
        var request = HTTPRequest.form(
            try #require(URL(string: "https://login.example.com/token?code=query-secret")), fields: [("refresh_token", "body-secret")])
        request.headers.add("Authorization", "Bearer header-secret")
        request.headers.add("DPoP", "proof-secret")
        let response = HTTPResponse(status: 200, headers: HTTPHeaders([("Set-Cookie", "cookie-secret")]), body: Array("token-secret".utf8))
        var dumped = ""
        dump(request, to: &dumped)
        dump(response, to: &dumped)
        for text in ["\(request)", String(reflecting: request), "\(request.headers)", "\(response)", String(reflecting: response), dumped] {
            for secret in ["query-secret", "body-secret", "header-secret", "proof-secret", "cookie-secret", "token-secret"] {
                #expect(!text.contains(secret), "\(text)")
            }
        }
        #expect("\(request)".contains("POST https://login.example.com/token") && "\(request)".contains("Authorization"))
    }

    @Test("the redacted summary shows neither query nor user info")
    func redactedSummary() throws {
        let url = try #require(URL(string: "https://user:pw@login.example.com:8443/t/token?code=secret"))
        let summary = HTTPRequest(method: .post, url: url).redactedSummary
        #expect(summary == "POST https://login.example.com:8443/t/token")
    }
}
