import Foundation

/// A TPM 2.0 of the test's own: Debian's `swtpm` (packages `swtpm`, `swtpm-tools`), with its
/// data and control channels on unix sockets in a private folder, reached through the TCTI
/// ``tcti`` (`swtpm:path=…`) by `tpm2-openssl` as a real TPM is through `device:/dev/tpmrm0`.
///
/// Each test starts its own: swtpm has no resource manager (a key a killed process left loaded
/// stays), and its state is the test's. ``stop()`` sends `TPM2_Shutdown` first — without it
/// the TPM counts a power loss, and three of those after a key was used lock it out.
public final class SoftwareTPM: @unchecked Sendable {
    public static let swtpm = URL(fileURLWithPath: "/usr/bin/swtpm")
    public static let swtpmIoctl = URL(fileURLWithPath: "/usr/bin/swtpm_ioctl")

    /// Whether swtpm and the OpenSSL provider are installed (scripts/bootstrap installs them).
    public static var isAvailable: Bool {
        FileManager.default.isExecutableFile(atPath: swtpm.path)
            && FileManager.default.fileExists(atPath: "/usr/lib/\(multiarch)/ossl-modules/tpm2.so")
    }

    private static var multiarch: String {
        #if arch(arm64)
        "aarch64-linux-gnu"
        #else
        "x86_64-linux-gnu"
        #endif
    }

    /// The folder holding the TPM's state and sockets (removed by ``stop()``).
    public let directory: URL
    /// What `TPM2OPENSSL_TCTI` / ``JOSE/TPM/open(tcti:)`` names to reach this TPM.
    public var tcti: String { "swtpm:path=\(socket.path)" }
    private var socket: URL { directory.appendingPathComponent("sock") }
    private let process: TestProcess

    /// Starts a TPM with a fresh state; returns once it answers on its data socket.
    public init() async throws {
        directory = try TestPaths.makeTemporaryDirectory(prefix: "swtpm")
        let socketPath = directory.appendingPathComponent("sock").path
        process = try TestProcess(
            Self.swtpm,
            [
                "socket", "--tpm2", "--server", "type=unixio,path=\(socketPath)", "--ctrl",
                "type=unixio,path=\(socketPath).ctrl", "--tpmstate", "dir=\(directory.path)", "--flags",
                "not-need-init,startup-clear", "--log", "file=/dev/null",
            ])
        do {
            try await until("swtpm answers on \(socketPath)", timeout: .seconds(30)) {
                guard process.isRunning else { return true }
                return Self.connects(socketPath)
            }
            guard process.isRunning else {
                throw HarnessError("swtpm ended at start: \(process.finish(timeout: 5).stderr)")
            }
        } catch {
            process.kill()
            _ = process.finish(timeout: 5)
            try? FileManager.default.removeItem(at: directory)
            throw error
        }
    }

    /// Shuts the TPM down in order (`TPM2_Shutdown(SU_CLEAR)`, then swtpm's own shutdown) and
    /// removes its folder. (A test that fails before leaves it to deinit: killed, folder removed.)
    public func stop() async {
        let (socket, process, directory) = (self.socket, self.process, self.directory)
        _ = try? await offThePool {
            _ = Self.exchange(socket.path, [0x80, 0x01, 0, 0, 0, 0x0c, 0, 0, 0x01, 0x45, 0, 0])
            _ = try? ProcessRunner.run(Self.swtpmIoctl, ["--unix", socket.path + ".ctrl", "-s"], timeout: 10)
            _ = process.finish(timeout: 10)
            try? FileManager.default.removeItem(at: directory)
        }
    }

    deinit {
        process.kill()
        try? FileManager.default.removeItem(at: directory)
    }

    /// Whether a unix-socket connection to `path` succeeds (swtpm accepts one per command).
    private static func connects(_ path: String) -> Bool {
        exchange(path, nil) != nil
    }

    /// Connects to `path`, sends `command` (when given) and reads the answer's first bytes.
    private static func exchange(_ path: String, _ command: [UInt8]?) -> [UInt8]? {
        let fd = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return nil }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in bytes.enumerated() { raw[index] = byte }
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0 else { return nil }
        guard let command else { return [] }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        guard write(fd, command, command.count) == command.count else { return nil }
        var answer = [UInt8](repeating: 0, count: 64)
        let count = read(fd, &answer, answer.count)
        return count > 0 ? Array(answer.prefix(count)) : nil
    }
}
