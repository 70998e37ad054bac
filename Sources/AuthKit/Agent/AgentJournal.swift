import AuthKitCore
#if canImport(Glibc)
import Glibc
#endif

/// Sends each audit event to the systemd journal, when one runs, with structured fields
/// (`SYSLOG_IDENTIFIER=authkit`, `AUTHKIT_EVENT`, `AUTHKIT_GROUP`, …), so `journalctl --user -t
/// authkit` shows who got which token after the agent is gone. The journal's native protocol:
/// one datagram of `KEY=value` lines to its socket, sent without waiting — a busy or absent
/// journal never holds a token request up. Never a token.
package struct AgentJournal: Sendable {
    /// The journal's socket (`AUTHKIT_JOURNAL_SOCKET` overrides it, for tests).
    package let path: String

    /// The journal of this environment, or nil when none listens.
    package init?(environment: [String: String]) {
        let path = environment["AUTHKIT_JOURNAL_SOCKET"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? "/run/systemd/journal/socket"
        var info = stat()
        guard stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFSOCK else { return nil }
        self.path = path
    }

    /// The datagram for `event`: its fields, each value on one line.
    static func datagram(_ event: AgentEvent, message: String) -> [UInt8] {
        var fields: [(String, String)] = [
            ("MESSAGE", message), ("SYSLOG_IDENTIFIER", "authkit"),
            ("PRIORITY", event.kind == .refused || event.kind == .failed ? "4" : "6"),
            ("AUTHKIT_EVENT", event.kind.rawValue),
        ]
        let optional: [(String, String?)] = [
            ("AUTHKIT_GROUP", event.group), ("AUTHKIT_ACCOUNT", event.account), ("AUTHKIT_SCOPES", event.scopes?.joined(separator: " ")),
            ("AUTHKIT_TOKEN_KIND", event.token), ("AUTHKIT_REASON", event.reason), ("AUTHKIT_ASKER", event.asker),
            ("AUTHKIT_ASKER_PID", event.pid.map(String.init)), ("AUTHKIT_ASKER_EXE", event.executable),
            ("AUTHKIT_ASKER_COMMAND_LINE", event.commandLine), ("AUTHKIT_ASKER_UNIT", event.unit), ("AUTHKIT_VIA", event.via),
        ]
        for case (let key, let value?) in optional { fields.append((key, value)) }
        var bytes: [UInt8] = []
        for (key, value) in fields {
            bytes += Array(key.utf8) + [UInt8(ascii: "=")] + Array(ProcText.cleaned(value, limit: 1024).utf8) + [0x0A]
        }
        return bytes
    }

    /// Sends `event` (best effort).
    package func send(_ event: AgentEvent, message: String) {
        guard var address = AgentSocket.address(path) else { return }
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return }
        defer { close(fd) }
        let bytes = Self.datagram(event, message: message)
        _ = bytes.withUnsafeBytes { raw in
            withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(
                        fd, raw.baseAddress, raw.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL), $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                }
            }
        }
    }
}
