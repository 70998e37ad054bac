#if hasFeature(Embedded)
import CLibc
#elseif canImport(Glibc)
import Glibc
#endif

/// One request line to the authkit agent and its one answer line, for every client of the
/// agent (`authkit` and the lean client alike): where the socket is, who may be at its other
/// end, and how long to wait. What the lines say is the caller's.
package enum AgentExchange {
    /// `sun_path`'s size, with its terminating NUL.
    package static let maximumPathBytes = 108
    /// An answer is one line of at most this many bytes (an Entra access token is a few KiB;
    /// a `log` answer holds forty events).
    package static let maximumAnswerBytes = 64 << 10
    /// How deep a protocol line's JSON may nest (requests and answers).
    package static let maximumDepth = 4

    /// `AUTHKIT_AGENT_SOCK`, else `$XDG_RUNTIME_DIR/authkit/agent.sock`; nil when neither
    /// names an absolute path.
    package static func socketPath(environment: [String: String]) -> String? {
        if let explicit = environment["AUTHKIT_AGENT_SOCK"], !explicit.isEmpty {
            return explicit.hasPrefix("/") ? explicit : nil
        }
        if let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") { return runtime + "/authkit/agent.sock" }
        return nil
    }

    /// The socket a client asks, or nil: none named (``socketPath(environment:)``), a path
    /// too long for `sun_path`, or `AUTHKIT_AGENT=off`.
    package static func clientSocketPath(environment: [String: String]) -> String? {
        guard environment["AUTHKIT_AGENT"] != "off", let path = socketPath(environment: environment),
            path.utf8.count < maximumPathBytes
        else { return nil }
        return path
    }

    /// Sends `line` (a request and its newline) and reads one answer line of at most `limit`
    /// bytes, blocking the calling thread until `timeout` has passed; or why not, as a phrase.
    /// Only an agent of this user, and never this process itself, is asked: the kernel's word
    /// on the connected socket (`SO_PEERCRED`), not the path's owner.
    package static func exchange(path: String, line: [UInt8], timeout: Duration, limit: Int) -> Result<[UInt8], AgentSocket.Failure> {
        let fd: Int32
        switch AgentSocket.connect(path) {
        case .success(let connected): fd = connected
        case .failure(let reason): return .failure(reason)
        }
        defer { close(fd) }
        guard let peer = AgentSocket.peer(fd), peer.uid == getuid() else {
            return .failure(AgentSocket.Failure("the socket \(path) is served by another user; not used"))
        }
        // An agent whose own environment names its own socket (a forward given the socket it
        // serves) would wait for itself.
        guard peer.pid != getpid() else { return .failure(AgentSocket.Failure("the socket \(path) is this process's own; not used")) }
        guard AgentSocket.writeAll(fd, line) else { return .failure(AgentSocket.Failure("the agent closed the connection")) }
        return AgentSocket.readLine(fd, timeout: timeout, limit: limit)
    }
}
