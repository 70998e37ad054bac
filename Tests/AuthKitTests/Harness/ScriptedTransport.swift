import Foundation
import Synchronization
@testable import AuthKit

/// An HTTPTransport that answers from a script, for failures a real server cannot stage
/// deterministically (a connection refused once, then accepted).
final class ScriptedTransport: HTTPTransport {
    private let script: Mutex<[Result<HTTPResponse, HTTPError>]>
    private let sent = Mutex<[HTTPRequest]>([])

    init(_ script: [Result<HTTPResponse, HTTPError>]) {
        self.script = Mutex(script)
    }

    var requests: [HTTPRequest] { sent.withLock { $0 } }

    func send(_ request: HTTPRequest) async throws(HTTPError) -> HTTPResponse {
        sent.withLock { $0.append(request) }
        let next = script.withLock { $0.isEmpty ? nil : $0.removeFirst() }
        guard let next else { throw .other(host: "script", detail: "script exhausted") }
        return try next.get()
    }
}
