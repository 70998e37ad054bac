#if canImport(Glibc)
import SecretStore
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
        guard environment["AUTHKIT_AGENT"] != "off" else { return nil }
        guard let path = Self.socketPath(environment: environment), path.utf8.count < Self.maximumPathBytes else { return nil }
        self.path = path
        forwardKey = environment["AUTHKIT_FORWARD_KEY"].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// `AUTHKIT_AGENT_SOCK`, else `$XDG_RUNTIME_DIR/authkit/agent.sock`.
    package static func socketPath(environment: [String: String]) -> String? {
        if let explicit = environment["AUTHKIT_AGENT_SOCK"], !explicit.isEmpty {
            return explicit.hasPrefix("/") ? explicit : nil
        }
        if let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") { return runtime + "/authkit/agent.sock" }
        return nil
    }

    /// `sun_path`'s size, with its terminating NUL.
    package static let maximumPathBytes = 108

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
        let fd: Int32
        switch AgentSocket.connect(path) {
        case .success(let connected): fd = connected
        case .failure(let reason): return .unavailable(reason.description)
        }
        defer { close(fd) }
        // The socket's owner as the kernel saw it when the agent listened: only our own.
        guard let peer = AgentSocket.peer(fd), peer.uid == getuid() else {
            return .unavailable("the socket \(path) is served by another user; not used")
        }
        // An agent whose own environment names its own socket (a forward given the socket it
        // serves) would wait for itself.
        guard peer.pid != getpid() else { return .unavailable("the socket \(path) is this process's own; not used") }
        let message = AgentMessage.encode(request)
        guard AgentSocket.writeAll(fd, message) else { return .unavailable("the agent closed the connection") }
        let deadline = ContinuousClock.now + timeout
        switch AgentSocket.readLine(fd, deadline: deadline, limit: AgentMessage.maximumAnswerBytes) {
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
