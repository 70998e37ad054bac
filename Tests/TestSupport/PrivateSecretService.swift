import Foundation

/// A private, throw-away Secret Service for tests: its own D-Bus session bus (a
/// `dbus-daemon` that loads no service files, so nothing is ever auto-started on it) and,
/// depending on ``Provider``, an unlocked gnome-keyring, nothing, or a process that owns
/// `org.freedesktop.secrets` and never answers. HOME and the XDG directories point into a
/// temporary folder, so no test can touch a real user's keyring. ``stop()`` (or deinit)
/// kills every process it started and removes the folder.
public final class PrivateSecretService: @unchecked Sendable {
    public enum Provider: Sendable {
        /// `gnome-keyring-daemon --unlock --components=secrets`, password on stdin.
        case gnomeKeyring
        /// A bus on which nothing provides the Secret Service.
        case none
        /// A process owning `org.freedesktop.secrets` that never answers a call.
        case hung
        /// Debian's KeePassXC 2.7.4, headless (Qt's offscreen platform), with a database whose
        /// group `authkit` is exposed as the default collection (Tests/Peers/keepassxc_service.py).
        case keepassxc
    }

    public enum HarnessError: Error, CustomStringConvertible {
        case missing(String)
        case startFailed(String)
        case peerFailed(String)
        public var description: String {
            switch self {
            case .missing(let what): return "\(what) is missing: run ./scripts/test (it installs and builds what the tests need)"
            case .startFailed(let why): return "could not start the private Secret Service: \(why)"
            case .peerFailed(let why): return "test peer failed: \(why)"
            }
        }
    }

    /// The keyring password the daemon was unlocked with (KeePassXC: its database's).
    public private(set) var password: String
    /// Which program provides the Secret Service.
    public let provider: Provider
    /// The temporary folder holding HOME, XDG_RUNTIME_DIR (the bus socket) and logs.
    public let root: URL
    public let busAddress: String
    /// The environment for child processes: this process's, with HOME, XDG_* and
    /// DBUS_SESSION_BUS_ADDRESS pointing into ``root``, and no display.
    public let environment: [String: String]
    private var processes: [TestProcess] = []
    private let lock = NSLock()

    /// The X display of gnome-keyring's real prompter (``init(provider:password:prompter:)``
    /// with `prompter`), where its dialogs show; nil without one.
    public private(set) var display: String?

    /// - Parameter prompter: gnome-keyring's real prompter (gcr-prompter, D-Bus activated on this
    ///   bus) on a private Xvfb display: dialogs a test answers with ``answerPrompt(password:uncheckAutoUnlock:dismiss:timeout:)``.
    ///   Without it, no dialog can be shown, and a prompt completes dismissed.
    public init(provider: Provider = .gnomeKeyring, password: String = "authkit-test-keyring", prompter: Bool = false) throws {
        self.password = password
        self.provider = provider
        for tool in ["/usr/bin/dbus-daemon", "/usr/bin/dbus-send", "/usr/bin/gnome-keyring-daemon", "/usr/bin/secret-tool"]
        where !FileManager.default.isExecutableFile(atPath: tool) {
            throw HarnessError.missing(tool)
        }
        guard FileManager.default.isExecutableFile(atPath: TestPaths.python.path) else {
            throw HarnessError.missing("the test peers' Python (\(TestPaths.python.path))")
        }
        root = try TestPaths.makeTemporaryDirectory(prefix: "authkit-keyring")
        let home = root.appendingPathComponent("home"), run = root.appendingPathComponent("run")
        for directory in [
            home, run, home.appendingPathComponent(".local/share"), home.appendingPathComponent(".config"),
            home.appendingPathComponent(".cache"), home.appendingPathComponent(".local/state"),
        ] {
            try FileManager.default.createDirectory(
                at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
        var busEnvironment = ProcessInfo.processInfo.environment
        var serviceDirectory = ""
        if prompter {
            for tool in ["/usr/bin/Xvfb", "/usr/bin/xdotool", "/usr/bin/xwininfo", "/usr/libexec/gcr-prompter"]
            where !FileManager.default.isExecutableFile(atPath: tool) {
                try? FileManager.default.removeItem(at: root)
                throw HarnessError.missing(tool)
            }
            let xvfb = try TestProcess(
                URL(fileURLWithPath: "/usr/bin/Xvfb"), ["-displayfd", "1", "-screen", "0", "1024x768x24", "-nolisten", "tcp", "-noreset"],
                stdout: .pipe, stderr: .file(root.appendingPathComponent("xvfb.log")))
            processes.append(xvfb)
            guard let number = xvfb.firstStdoutLine(timeout: 15), Int(number) != nil else {
                xvfb.kill()
                xvfb.wait(timeout: 5)
                try? FileManager.default.removeItem(at: root)
                throw HarnessError.startFailed("Xvfb printed no display")
            }
            display = ":" + number
            // Only the prompter is activatable on this bus, with the test's HOME and display.
            let services = root.appendingPathComponent("services")
            try FileManager.default.createDirectory(at: services, withIntermediateDirectories: true)
            for name in ["org.gnome.keyring.SystemPrompter", "org.gnome.keyring.PrivatePrompter"] {
                try FileManager.default.copyItem(
                    at: URL(fileURLWithPath: "/usr/share/dbus-1/services/\(name).service"),
                    to: services.appendingPathComponent("\(name).service"))
            }
            serviceDirectory = "<servicedir>\(services.path)</servicedir>"
            busEnvironment["DISPLAY"] = display
            busEnvironment["NO_AT_BRIDGE"] = "1"
            busEnvironment["GSETTINGS_BACKEND"] = "memory"
            busEnvironment["HOME"] = home.path
            busEnvironment["XDG_RUNTIME_DIR"] = run.path
            busEnvironment["XDG_CONFIG_HOME"] = home.appendingPathComponent(".config").path
            busEnvironment["XDG_CACHE_HOME"] = home.appendingPathComponent(".cache").path
            busEnvironment["XDG_DATA_HOME"] = home.appendingPathComponent(".local/share").path
            // What the bus activates (the prompter, which outlives the bus for ten seconds) carries
            // this, so that stop() finds it.
            busEnvironment[Self.marker] = root.path
        }
        let config = root.appendingPathComponent("bus.conf")
        try """
        <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
        <busconfig>
          <type>session</type>
          <listen>unix:dir=\(run.path)</listen>
          <auth>EXTERNAL</auth>
          \(serviceDirectory)
          <policy context="default">
            <allow send_destination="*" eavesdrop="true"/>
            <allow eavesdrop="true"/>
            <allow own="*"/>
          </policy>
        </busconfig>
        """.write(to: config, atomically: false, encoding: .utf8)

        let bus = try TestProcess(
            URL(fileURLWithPath: "/usr/bin/dbus-daemon"), ["--config-file=\(config.path)", "--nofork", "--print-address=1"],
            environment: busEnvironment, stdout: .pipe, stderr: .file(root.appendingPathComponent("bus.log")))
        processes.append(bus)
        guard let line = bus.firstStdoutLine(timeout: 15), line.hasPrefix("unix:") else {
            bus.kill()
            bus.wait(timeout: 5)
            try? FileManager.default.removeItem(at: root)
            throw HarnessError.startFailed("dbus-daemon printed no address")
        }
        busAddress = line

        var environment = ProcessInfo.processInfo.environment
        for key in ["DISPLAY", "WAYLAND_DISPLAY", "GNOME_KEYRING_CONTROL", "SSH_AUTH_SOCK", "SECRET_SERVICE_BUS_NAME"] {
            environment.removeValue(forKey: key)
        }
        environment["HOME"] = home.path
        environment["XDG_RUNTIME_DIR"] = run.path
        environment["XDG_DATA_HOME"] = home.appendingPathComponent(".local/share").path
        environment["XDG_CONFIG_HOME"] = home.appendingPathComponent(".config").path
        environment["XDG_CACHE_HOME"] = home.appendingPathComponent(".cache").path
        environment["XDG_STATE_HOME"] = home.appendingPathComponent(".local/state").path
        environment["DBUS_SESSION_BUS_ADDRESS"] = busAddress
        if let display { environment["DISPLAY"] = display }
        self.environment = environment

        switch provider {
        case .none:
            return
        case .gnomeKeyring:
            let keyring = try TestProcess(
                URL(fileURLWithPath: "/usr/bin/gnome-keyring-daemon"), ["--unlock", "--components=secrets", "--foreground"],
                environment: environment, stdin: .pipe, stdout: .file(root.appendingPathComponent("keyring.out")),
                stderr: .file(root.appendingPathComponent("keyring.log")))
            processes.append(keyring)
            keyring.send(password)
            keyring.closeInput()
        case .keepassxc:
            guard FileManager.default.isExecutableFile(atPath: "/usr/bin/keepassxc") else {
                stop()
                throw HarnessError.missing("/usr/bin/keepassxc")
            }
            let scratch = root.appendingPathComponent("tmp")
            try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            var peerEnvironment = environment
            // The peer's folder (KeePassXC's HOME, config, database) inside ours: removed with it.
            peerEnvironment["TMPDIR"] = scratch.path
            let keepassxc = try TestProcess(
                TestPaths.python,
                [Self.packageFile("Tests/Peers/keepassxc_service.py").path, "--log", root.appendingPathComponent("keepassxc.log").path],
                environment: peerEnvironment, stdin: .pipe, stdout: .pipe, stderr: .file(root.appendingPathComponent("keepassxc.err")))
            processes.append(keepassxc)
            guard let line = keepassxc.firstStdoutLine(timeout: 60),
                let ready = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                let databasePassword = ready["password"] as? String
            else {
                let log = (try? String(contentsOf: root.appendingPathComponent("keepassxc.log"), encoding: .utf8)) ?? ""
                stop()
                throw HarnessError.startFailed("KeePassXC did not come up: \(log)")
            }
            self.password = databasePassword
            return
        case .hung:
            let hung = try TestProcess(
                TestPaths.python, [Self.peerScript.path, "hang"], environment: environment,
                stdout: .file(root.appendingPathComponent("hung.out")), stderr: .file(root.appendingPathComponent("hung.log")))
            processes.append(hung)
        }
        // Wait (bounded) until something owns the Secret Service name.
        let deadline = Date().addingTimeInterval(15)
        while Date() < deadline {
            let reply = try ProcessRunner.run(
                URL(fileURLWithPath: "/usr/bin/dbus-send"),
                [
                    "--session", "--print-reply", "--dest=org.freedesktop.DBus", "/", "org.freedesktop.DBus.NameHasOwner",
                    "string:org.freedesktop.secrets",
                ], environment: environment, timeout: 5)
            if reply.stdout.contains("boolean true") { return }
            Thread.sleep(forTimeInterval: 0.02)
        }
        let log =
            (try? String(contentsOf: root.appendingPathComponent(provider == .hung ? "hung.log" : "keyring.log"), encoding: .utf8)) ?? ""
        stop()
        throw HarnessError.startFailed("nothing took org.freedesktop.secrets within 15 s: \(log)")
    }

    deinit { stop() }

    /// The process ids still running (for the no-leftovers check).
    public var processIdentifiers: [Int32] {
        lock.lock()
        defer { lock.unlock() }
        return processes.map(\.pid)
    }

    /// Stops every process and removes the temporary folder. Safe to call twice.
    public func stop() {
        stopProcesses()
        try? FileManager.default.removeItem(at: root)
    }

    private func stopProcesses() {
        lock.lock()
        let running = processes
        processes = []
        lock.unlock()
        // Nothing of theirs is worth keeping: SIGKILL to each one's process group.
        for process in running.reversed() {
            process.kill()
            process.wait(timeout: 10)
        }
        if display != nil { Self.killActivated(marked: root.path) }
    }

    /// The environment variable marking what this bus activated.
    static let marker = "AUTHKIT_TEST_BUS_ROOT"

    /// Kills the processes the bus activated (the prompter is reparented away from it), found by
    /// the marker in their environment, and waits until they are gone.
    static func killActivated(marked root: String) {
        let wanted = Array("\(marker)=\(root)".utf8)
        let deadline = Date().addingTimeInterval(10)
        repeat {
            var found: [Int32] = []
            let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
            for entry in entries {
                guard let pid = Int32(entry), pid != getpid(),
                    let environ = FileManager.default.contents(atPath: "/proc/\(entry)/environ")
                else { continue }
                if environ.split(separator: 0).contains(where: { Array($0) == wanted }) { found.append(pid) }
            }
            if found.isEmpty { return }
            for pid in found { kill(pid, SIGKILL) }
            Thread.sleep(forTimeInterval: 0.05)
        } while Date() < deadline
    }

    /// Waits for the prompter's dialog and answers it (Tests/Peers/prompt_answerer.py): types
    /// `password` (twice for a new keyring's) and presses Return, leaving the unlock dialog's
    /// "Automatically unlock this keyring whenever I'm logged in" box as it is (checked) unless
    /// `uncheckAutoUnlock`; or presses Escape with `dismiss`. Returns the answerer's report.
    @discardableResult
    public func answerPrompt(password: String? = nil, uncheckAutoUnlock: Bool = false, dismiss: Bool = false, timeout: Int = 60) throws
        -> String
    {
        var arguments = [Self.packageFile("Tests/Peers/prompt_answerer.py").path, "--timeout", String(timeout)]
        var environment = self.environment
        if dismiss {
            arguments.append("--dismiss")
        } else {
            environment["AUTHKIT_TEST_PROMPT_PASSWORD"] = password ?? self.password
            arguments += ["--password-env", "AUTHKIT_TEST_PROMPT_PASSWORD"]
        }
        if uncheckAutoUnlock { arguments += ["--choice", "toggle"] }
        let result = try ProcessRunner.run(TestPaths.python, arguments, environment: environment, timeout: TimeInterval(timeout + 15))
        guard result.status == 0 else { throw HarnessError.peerFailed("prompt_answerer: \(result.stdout) \(result.stderr)") }
        return result.stdout
    }

    // MARK: Running programs against it

    /// Runs `SecretStoreProbe` (the second program using SecretStore) on this bus.
    public func probe(_ arguments: [String], stdin: String? = nil, timeout: TimeInterval = 60) throws -> ProcessResult {
        try run(Self.probeExecutable(), arguments, stdin: stdin, timeout: timeout)
    }

    /// Runs `secret-tool` on this bus.
    public func secretTool(_ arguments: [String], stdin: String? = nil) throws -> ProcessResult {
        try run(URL(fileURLWithPath: "/usr/bin/secret-tool"), arguments, stdin: stdin)
    }

    /// Runs the Python peer (Tests/Peers/secret_service_peer.py) on this bus; fails on a non-zero exit.
    @discardableResult
    public func peer(_ arguments: [String]) throws -> String {
        let result = try run(TestPaths.python, [Self.peerScript.path] + arguments)
        guard result.status == 0 else { throw HarnessError.peerFailed("\(arguments.first ?? ""): \(result.stderr)") }
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    public func run(_ executable: URL, _ arguments: [String], stdin: String? = nil, timeout: TimeInterval = 60) throws
        -> ProcessResult
    {
        try ProcessRunner.run(executable, arguments, environment: environment, stdin: stdin, timeout: timeout)
    }

    /// Starts watching this bus's method calls (Tests/Peers/bus_monitor.py); it ends with ``stop()``.
    public func monitor() throws -> BusMonitor {
        let process = try TestProcess(
            TestPaths.python, [Self.packageFile("Tests/Peers/bus_monitor.py").path], environment: environment,
            stderr: .file(root.appendingPathComponent("monitor.log")))
        lock.lock()
        processes.append(process)
        lock.unlock()
        return try BusMonitor(process: process, environment: environment)
    }

    /// Creates a collection labelled `label` through gnome-keyring's
    /// `InternalUnsupportedGuiltRiddenInterface.CreateWithMasterPassword` — test setup only:
    /// the product asks through the standard CreateCollection and its prompt.
    public func createCollection(label: String, password: String = "collection-password") throws {
        try peer(["create-collection", label, password])
    }

    /// Locks every collection labelled `label`.
    public func lockCollection(label: String) throws { try peer(["lock", label]) }

    /// Unlocks every collection labelled `label` with its password, without a prompt (test setup).
    public func unlockCollection(label: String, password: String) throws { try peer(["unlock", label, password]) }

    /// How many collections carry `label`.
    public func collectionCount(label: String) throws -> Int { Int(try peer(["count-collections", label])) ?? -1 }

    // MARK: Paths

    public static let peerScript = packageFile("Tests/Peers/secret_service_peer.py")

    static func packageFile(_ path: String) -> URL { TestPaths.packageRoot.appendingPathComponent(path) }

    public static func probeExecutable() throws -> URL {
        let url = TestPaths.product("SecretStoreProbe")
        guard FileManager.default.isExecutableFile(atPath: url.path) else {
            throw HarnessError.missing("the SecretStoreProbe program (\(url.path))")
        }
        return url
    }
}
