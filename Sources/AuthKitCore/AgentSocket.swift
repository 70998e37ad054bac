#if hasFeature(Embedded)
import CLibc
#elseif canImport(Glibc)
import Glibc
#endif

/// The few socket calls the agent and its clients make, with the kernel's word on who is at
/// the other end (`SO_PEERCRED`) — never a path's owner checked before or after.
package enum AgentSocket {
    /// Why a socket call did not get through, as a phrase.
    package struct Failure: Error, Sendable, CustomStringConvertible {
        package var description: String
        /// The errno of a failed connect, if that is what failed.
        package var code: Int32 = 0
        package init(_ description: String, code: Int32 = 0) {
            self.description = description
            self.code = code
        }
    }

    /// `struct ucred`.
    package struct PeerCredentials: Sendable, Equatable {
        package var pid: Int32
        package var uid: UInt32
        package var gid: UInt32
        package init(pid: Int32 = 0, uid: UInt32 = 0, gid: UInt32 = 0) {
            self.pid = pid
            self.uid = uid
            self.gid = gid
        }
    }

    /// A connected `AF_UNIX` stream socket (close-on-exec), or why not.
    package static func connect(_ path: String) -> Result<Int32, Failure> {
        guard var address = address(path) else { return .failure(Failure("the socket path \(path) is too long")) }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return .failure(Failure("no socket: \(String(cString: strerror(errno)))")) }
        // A hung agent with a full backlog makes connect wait: at most a second, then the
        // caller goes without the agent (SO_SNDTIMEO bounds connect on a unix socket).
        var bound = timeval(tv_sec: 1, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &bound, socklen_t(MemoryLayout<timeval>.size))
        let status = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                systemConnect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard status == 0 else {
            let code = errno
            close(fd)
            if code == EAGAIN {
                return .failure(Failure("the agent at \(path) did not take the connection within a second (busy or stopped)", code: code))
            }
            return .failure(Failure("no agent at \(path) (\(String(cString: strerror(code))))", code: code))
        }
        var noSignal = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &noSignal, socklen_t(MemoryLayout<timeval>.size))
        return .success(fd)
    }

    package static func address(_ path: String) -> sockaddr_un? {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard !bytes.isEmpty, bytes.count < MemoryLayout.size(ofValue: address.sun_path), !bytes.contains(0) else { return nil }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        return address
    }

    /// Who is at the other end of a connected socket, as the kernel recorded it.
    package static func peer(_ fd: Int32) -> PeerCredentials? {
        var credentials = PeerCredentials()
        var length = socklen_t(MemoryLayout<PeerCredentials>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) == 0,
            length == socklen_t(MemoryLayout<PeerCredentials>.size)
        else { return nil }
        return credentials
    }

    package static func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { raw in
                send(fd, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
            }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { return false }
            offset += written
        }
        return true
    }

    /// One line (without its newline), read within `timeout`.
    package static func readLine(_ fd: Int32, timeout: Duration, limit: Int) -> Result<[UInt8], Failure> {
        var line: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16 << 10)
        // (At most a day: no caller waits longer, and the sum cannot overflow.)
        let deadline =
            monotonicMilliseconds() + min(max(timeout.components.seconds, 0), 86_400) * 1000 + timeout.components.attoseconds
            / 1_000_000_000_000_000
        while true {
            let left = deadline - monotonicMilliseconds()
            guard left > 0 else { return .failure(Failure("the agent did not answer in time")) }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, Int32(clamping: left))
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0 else { continue }
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count < 0 && (errno == EINTR || errno == EAGAIN) { continue }
            guard count > 0 else { return .failure(Failure("the agent closed the connection without an answer")) }
            if let end = chunk[0..<count].firstIndex(of: 0x0A) {
                line += chunk[0..<end]
                return line.count <= limit ? .success(line) : .failure(Failure("the agent's answer is too long"))
            }
            line += chunk[0..<count]
            guard line.count <= limit else { return .failure(Failure("the agent's answer is too long")) }
        }
    }
}

/// connect(2), whose name the enum's own `connect` hides.
private func systemConnect(_ fd: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t) -> Int32 {
    connect(fd, address, length)
}

/// `CLOCK_BOOTTIME` in milliseconds, the clock of `ContinuousClock` on Linux (which Embedded
/// Swift does not have): it goes on while the machine sleeps.
package func monotonicMilliseconds() -> Int64 {
    var now = timespec()
    clock_gettime(CLOCK_BOOTTIME, &now)
    return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
}
