import ArgumentParser
import AuthKit
import AuthKitCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#endif

/// `authkit setup agent`: systemd user units that start the agent on the first request.
struct SetupAgentCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "agent",
        abstract: "Start the authkit agent with your systemd user session (socket activation).",
        discussion: """
            Writes authkit-agent.socket and authkit-agent.service to \
            $XDG_CONFIG_HOME/systemd/user/ and enables the socket: systemd listens on \
            $XDG_RUNTIME_DIR/authkit/agent.sock and starts the agent on the first request. On a \
            server, `loginctl enable-linger $USER` keeps it across logins. --print shows the \
            units; --no-start only writes them.
            """)

    @Flag(help: "Show the units instead of writing them.")
    var print = false

    @Flag(name: .customLong("no-start"), help: "Write the units but do not run systemctl.")
    var noStart = false

    func run() async throws {
        let units = Self.units(executable: Setup.executablePath())
        let directory = Self.directory(environment: ProcessInfo.processInfo.environment)
        if print {
            Terminal.printData(units.map { "# \(directory)/\($0.name)\n\($0.text)" }.joined(separator: "\n"))
            return
        }
        // All or nothing: when a step fails, the unit files are put back as they were (none
        // left behind for `setup --list` to count), and systemd was never told of them.
        var previous: [(path: String, bytes: [UInt8]?)] = []
        var madeFolders: [String] = []
        var enabled = false
        do throws(Setup.Failure) {
            // No user systemd (a container, WSL without it, a bare SSH login): said before
            // anything is written.
            if !noStart, (try? Setup.run("systemctl", ["--user", "show-environment"]))?.0 != 0 {
                throw Setup.Failure(
                    description: "no systemd user session answers here (`systemctl --user` cannot reach it); nothing was written")
            }
            madeFolders = Self.missingFolders(directory)
            try Setup.makeFolder(directory, mode: 0o755)
            for unit in units {
                let path = directory + "/" + unit.name
                previous.append((path, try? FileAccess.read(path)))
                try Setup.writeAtomically(Array(unit.text.utf8), to: path, mode: 0o644)
            }
            if !noStart {
                for step in [["--user", "daemon-reload"], ["--user", "enable", "--now", "authkit-agent.socket"]] {
                    let (status, _) = try Setup.run("systemctl", step)
                    if step.contains("enable") { enabled = true }
                    guard status == 0 else {
                        throw Setup.Failure(
                            description:
                                "`systemctl \(step.joined(separator: " "))` failed (exit \(status)); is a systemd user session running? "
                                + "Nothing was left written")
                    }
                }
            }
            for unit in units { Terminal.printError("✓ \(directory)/\(unit.name)") }
            guard !noStart else {
                Terminal.printError("To start it: systemctl --user daemon-reload && systemctl --user enable --now authkit-agent.socket")
                return
            }
            Terminal.printError("✓ the agent starts on the first request; check with: authkit agent status")
        } catch {
            // An enable that got as far as its link leaves none behind.
            if enabled { _ = try? Setup.run("systemctl", ["--user", "disable", "authkit-agent.socket"]) }
            for (path, bytes) in previous.reversed() {
                if let bytes { try? Setup.writeAtomically(bytes, to: path, mode: 0o644) } else { unlink(path) }
            }
            for folder in madeFolders.reversed() { rmdir(folder) }
            Terminal.printError(Voice.error(error.description, hint: "without systemd: eval \"$(authkit agent start)\""))
            throw ExitStatus.usage
        }
    }

    /// The folders of `path` (itself included) that do not exist yet, outermost first.
    static func missingFolders(_ path: String) -> [String] {
        var missing: [String] = []
        var current = path
        while !current.isEmpty, current != "/", !FileManager.default.fileExists(atPath: current) {
            missing.insert(current, at: 0)
            guard let slash = current.lastIndex(of: "/") else { break }
            current = String(current[..<slash])
        }
        return missing
    }

    static func directory(environment: [String: String]) -> String {
        if let config = environment["XDG_CONFIG_HOME"], config.hasPrefix("/") { return config + "/systemd/user" }
        return (environment["HOME"] ?? "") + "/.config/systemd/user"
    }

    static func units(executable: String) -> [(name: String, text: String)] {
        [
            (
                "authkit-agent.socket",
                """
                [Unit]
                Description=authkit agent socket: tokens from memory for this user's tools

                [Socket]
                ListenStream=%t/authkit/agent.sock
                SocketMode=0600
                DirectoryMode=0700

                [Install]
                WantedBy=sockets.target

                """
            ),
            (
                "authkit-agent.service",
                """
                [Unit]
                Description=authkit agent: tokens from memory for this user's tools
                Requires=authkit-agent.socket

                [Service]
                Type=exec
                ExecStart=\(Setup.shellQuoted(executable)) agent run
                Restart=on-failure

                """
            ),
        ]
    }

    /// Whether the units are there.
    static func status() -> SetupStatus {
        let directory = directory(environment: ProcessInfo.processInfo.environment)
        guard FileManager.default.fileExists(atPath: directory + "/authkit-agent.socket") else {
            return .notSetUp(hint: "authkit setup agent")
        }
        // Written with --no-start (or disabled since): `enable` makes the sockets.target link.
        guard FileManager.default.fileExists(atPath: directory + "/sockets.target.wants/authkit-agent.socket") else {
            return .notSetUp(hint: "the units are written but not enabled: systemctl --user enable --now authkit-agent.socket")
        }
        return .setUp(place: directory + "/authkit-agent.socket")
    }
}
