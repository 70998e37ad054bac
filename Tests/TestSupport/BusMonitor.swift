import Foundation

/// The method calls on a ``PrivateSecretService``'s bus, as the bus_monitor peer sees them:
/// tests count the calls that would put a dialog on a desktop (`CreateCollection`, `Unlock`,
/// `Prompt`) made by real programs, not by a mock.
public final class BusMonitor: @unchecked Sendable {
    /// One method call seen on the bus.
    public struct Call: Sendable, CustomStringConvertible {
        public var interface: String
        public var member: String
        public var path: String
        public var arg0: String
        public var description: String { "\(interface).\(member) \(path)" }
    }

    private let process: TestProcess
    private let environment: [String: String]
    private var markers = 0
    private let lock = NSLock()

    init(process: TestProcess, environment: [String: String]) throws {
        self.process = process
        self.environment = environment
        guard process.firstStdoutLine(timeout: 15) == "ready" else {
            throw PrivateSecretService.HarnessError.peerFailed("bus_monitor: \(process.stderrSoFar)")
        }
    }

    /// Every call so far — after a marker call has come through, so that each call made
    /// before this one is in (the bus delivers in order).
    public func calls() throws -> [Call] {
        let marker = lock.withLock {
            markers += 1
            return "authkit.test.marker\(markers)"
        }
        _ = try ProcessRunner.run(
            URL(fileURLWithPath: "/usr/bin/dbus-send"),
            [
                "--session", "--print-reply", "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus.NameHasOwner",
                "string:\(marker)",
            ],
            environment: environment, timeout: 10)
        let deadline = Date().addingTimeInterval(10)
        while true {
            let calls = parsed()
            if calls.contains(where: { $0.arg0 == marker }) {
                return calls.filter { !($0.member == "NameHasOwner" && $0.arg0.hasPrefix("authkit.test.marker")) }
            }
            guard Date() < deadline, process.isRunning else {
                throw PrivateSecretService.HarnessError.peerFailed("bus_monitor did not see its marker: \(process.stderrSoFar)")
            }
            usleep(5_000)
        }
    }

    /// How many calls of `member` (e.g. `CreateCollection`, `Unlock`, `Prompt`) so far.
    public func count(_ member: String) throws -> Int {
        try calls().filter { $0.member == member }.count
    }

    private func parsed() -> [Call] {
        process.stdoutSoFar.split(separator: "\n").dropFirst().compactMap { line in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: String] else { return nil }
            return Call(
                interface: object["interface"] ?? "", member: object["member"] ?? "", path: object["path"] ?? "",
                arg0: object["arg0"] ?? "")
        }
    }
}
