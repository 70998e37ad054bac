import AuthKitCore
import CLibc

/// The lean client's few dealings with its process: the environment, files, the clock,
/// standard output, and handing the command to `authkit`.
enum LeanProcess {
    /// `environ` as a dictionary, or nil when a name appears twice (which of the two authkit
    /// would take is not the lean client's to guess: it hands such a command over).
    static func environment() -> [String: String]? {
        var variables: [String: String] = [:]
        guard var entry = environ else { return variables }
        while let pointer = entry.pointee {
            let text = String(cString: pointer)
            if let equals = text.utf8.firstIndex(of: UInt8(ascii: "=")) {
                let name = String(text[..<equals])
                guard variables[name] == nil else { return nil }
                variables[name] = String(text[text.utf8.index(after: equals)...])
            }
            entry += 1
        }
        return variables
    }

    /// true: `path` is there (a link counts, even a dangling one: the lean client reads no
    /// configuration, so anything there sends the command to authkit);
    /// false: no such file (as authkit reads a missing configuration file: ENOENT or ENOTDIR);
    /// nil: anything else.
    static func exists(_ path: String) -> Bool? {
        var info = stat()
        if lstat(path, &info) == 0 { return true }
        let code = errno
        return code == ENOENT || code == ENOTDIR ? false : nil
    }

    /// Seconds from now until `time` (Unix seconds), rounded toward zero.
    static func secondsUntil(_ time: Int64) -> Int {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int(Double(time) - (Double(now.tv_sec) + Double(now.tv_nsec) / 1e9))
    }

    /// `bytes` on standard output, short writes retried.
    static func write(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { raw in CLibc.write(1, raw.baseAddress! + offset, raw.count - offset) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { return }
            offset += written
        }
    }

    /// Runs the full `authkit` beside this program with this process's arguments (and a
    /// refusal the agent already gave, so that authkit explains it without asking again).
    static func handOff(_ vector: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>, refusal: [UInt8]? = nil) -> Never {
        if let refusal { setenv(refusalVariable, String(decoding: refusal, as: UTF8.self), 1) }
        let own = ownPath()
        if let own, let slash = own.utf8.lastIndex(of: UInt8(ascii: "/")) {
            let full = String(own[...slash]) + "authkit"
            if full != own { execv(full, vector) }
            let reason = full == own ? "it is this program" : String(cString: strerror(errno))
            fail("cannot run authkit at \(full): \(reason)")
        }
        fail("cannot find where this program is (/proc/self/exe)")
    }

    /// The variable a refusal is handed over in (`authkit help environment`).
    static let refusalVariable = "AUTHKIT_AGENT_ANSWER"

    private static func ownPath() -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard length > 0 else { return nil }
        return String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private static func fail(_ message: String) -> Never {
        let line = Array("authkit: \(message)\n".utf8)
        _ = line.withUnsafeBytes { CLibc.write(2, $0.baseAddress, $0.count) }
        exit(2)
    }
}
