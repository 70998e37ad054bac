import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Debian's OpenSSH server on 127.0.0.1, started by a test with its own host key, client key
/// and configuration (never the system's service), admitting only `authkit-remote` — the
/// remote account of the forwarding tests, which `scripts/bootstrap` creates.
public final class TestSSHServer: @unchecked Sendable {
    public static let user = "authkit-remote"

    public let port: Int
    public let directory: URL
    public let process: TestProcess

    /// Why the server cannot run here, or nil.
    public static var unavailableReason: String? {
        guard getuid() == 0 else { return "sshd must start as root to switch to \(user)" }
        guard FileManager.default.isExecutableFile(atPath: "/usr/sbin/sshd") else {
            return "openssh-server is missing: run ./scripts/bootstrap"
        }
        guard getpwnam(user) != nil else { return "the user \(user) does not exist: run ./scripts/bootstrap as root" }
        return nil
    }

    /// `streamLocalBindMask`: sshd's umask for the sockets `-R` makes (nil: OpenSSH's 0177,
    /// owner only); "0000" is an administrator's opened-up server. `home`: the remote
    /// account's HOME in its sessions (sshd's SetEnv; nil: its home in the password database),
    /// so that a test gives it a home of its own.
    public init(streamLocalBindMask: String? = nil, home: String? = nil) throws {
        if let reason = Self.unavailableReason { throw HarnessError(reason) }
        directory = try TestPaths.makeTemporaryDirectory(prefix: "authkit-sshd")
        chmod(directory.path, 0o755)
        // sshd's privilege separation directory (Debian makes it at boot; a container has none).
        mkdir("/run/sshd", 0o755)
        for name in ["host_key", "client_key"] {
            let keygen = try ProcessRunner.run(
                URL(fileURLWithPath: "/usr/bin/ssh-keygen"),
                ["-q", "-t", "ed25519", "-N", "", "-f", directory.appendingPathComponent(name).path],
                environment: [:], timeout: 30)
            guard keygen.status == 0 else { throw HarnessError("ssh-keygen: \(keygen.stderr)") }
        }
        try FileManager.default.copyItem(
            at: directory.appendingPathComponent("client_key.pub"), to: directory.appendingPathComponent("authorized_keys"))
        chmod(directory.appendingPathComponent("authorized_keys").path, 0o644)
        var lastError = ""
        for _ in 0..<5 {
            let port = try Self.freePort()
            let config = """
                Port \(port)
                ListenAddress 127.0.0.1
                HostKey \(directory.path)/host_key
                AuthorizedKeysFile \(directory.path)/authorized_keys
                AllowUsers \(Self.user)
                PasswordAuthentication no
                KbdInteractiveAuthentication no
                UsePAM no
                StrictModes no
                PidFile none
                MaxStartups 50
                """ + (streamLocalBindMask.map { "\nStreamLocalBindMask \($0)" } ?? "") + (home.map { "\nSetEnv HOME=\($0)" } ?? "")
            let file = directory.appendingPathComponent("sshd_config")
            try config.write(to: file, atomically: false, encoding: .utf8)
            let process = try TestProcess(URL(fileURLWithPath: "/usr/sbin/sshd"), ["-D", "-e", "-f", file.path], environment: [:])
            let deadline = Date().addingTimeInterval(20)
            while process.isRunning && !process.stderrSoFar.contains("Server listening") && Date() < deadline { usleep(20_000) }
            if process.isRunning && process.stderrSoFar.contains("Server listening") {
                self.port = port
                self.process = process
                return
            }
            lastError = process.stderrSoFar
            process.send(signal: SIGKILL)
            process.wait(timeout: 5)
        }
        throw HarnessError("sshd did not start: \(lastError)")
    }

    /// ssh's options that reach this server as the remote user, with nothing of the machine's
    /// ssh configuration or known hosts.
    public var clientOptions: [String] {
        [
            "-F", "/dev/null", "-i", directory.appendingPathComponent("client_key").path, "-o", "UserKnownHostsFile=/dev/null",
            "-o", "StrictHostKeyChecking=no", "-o", "BatchMode=yes", "-o", "LogLevel=ERROR", "-p", String(port),
        ]
    }

    public var destination: String { "\(Self.user)@127.0.0.1" }

    public func stop() {
        process.send(signal: SIGTERM)
        process.wait(timeout: 10)
        try? FileManager.default.removeItem(at: directory)
    }

    /// A port nobody listens on now (the kernel's choice for port 0).
    public static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { throw HarnessError("no free port: \(String(cString: strerror(errno)))") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
