import AuthKitCore
import SecretStore

#if canImport(Glibc)
import Glibc
#endif

/// The client side of the agent protocol: one short connection per request, to the socket
/// `AUTHKIT_AGENT_SOCK` names (else `$XDG_RUNTIME_DIR/authkit/agent.sock`).
///
/// Anything short of an answer — no socket, a stale file, an agent of another user, a dead
/// or silent agent, a garbled answer — is ``Outcome/unavailable(_:)``, and the caller reads
/// the store itself: an agent only ever makes things faster, never breaks them. A missing or
/// stale socket costs a failed `connect`, well under a millisecond.
package struct AgentClient: Sendable {
    package let path: String
    /// How long to wait for an answer: a refresh behind it may take the provider's time.
    package var answerTimeout: Duration = .seconds(90)
    /// The key of a forward `authkit ssh` made (`AUTHKIT_FORWARD_KEY` in its session): a forward
    /// that is not open yet is opened with it, once, and the request sent again.
    package var forwardKey: String?

    package enum Outcome: Sendable {
        case answer(AgentResponse)
        case unavailable(String)
    }

    package init(path: String) {
        self.path = path
    }

    /// The agent socket the environment names, or nil (`AUTHKIT_AGENT=off`, no runtime
    /// directory, a relative or over-long path).
    package init?(environment: [String: String]) {
        guard let path = AgentExchange.clientSocketPath(environment: environment) else { return nil }
        self.path = path
        forwardKey = environment["AUTHKIT_FORWARD_KEY"].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// Sends `request` and reads one answer line, on a thread of its own.
    package func send(_ request: AgentRequest) async -> Outcome {
        let (path, timeout, key) = (self.path, answerTimeout, forwardKey)
        return await OwnThread.run { Self.exchange(path: path, request: request, timeout: timeout, forwardKey: key) }
    }

    /// One request (and, when a forward is not open yet and the key is at hand, its `open` and
    /// the request again), blocking the calling thread.
    static func exchange(path: String, request: AgentRequest, timeout: Duration, forwardKey: String? = nil) -> Outcome {
        let outcome = exchangeOnce(path: path, request: request, timeout: timeout)
        guard let forwardKey, case .answer(let response) = outcome, response.error?.code == .notOpen,
            case .answer(let opened) = exchangeOnce(path: path, request: .open(key: forwardKey), timeout: timeout), opened.ok
        else { return outcome }
        return exchangeOnce(path: path, request: request, timeout: timeout)
    }

    private static func exchangeOnce(path: String, request: AgentRequest, timeout: Duration) -> Outcome {
        switch AgentExchange.exchange(
            path: path, line: AgentMessage.encode(request), timeout: timeout, limit: AgentMessage.maximumAnswerBytes)
        {
        case .failure(let reason):
            return .unavailable(reason.description)
        case .success(let line):
            do throws(AgentFailure) {
                let response = try AgentMessage.decodeAnswer(from: line)
                guard response.version == AgentMessage.version else { return .unavailable("the agent speaks protocol \(response.version)") }
                return .answer(response)
            } catch {
                return .unavailable("the agent's answer was not understood (\(error.message))")
            }
        }
    }
}
