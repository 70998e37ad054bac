import Foundation
import TestSupport
import Testing

@testable import AuthKit

/// Who asks, read from the real `/proc`: this process and its parents, a pid that is gone,
/// `/proc/PID/stat` names with spaces and parentheses, command lines with control characters,
/// cgroup lines; and the journal's datagram, whose values cannot start a field of their own.
@Suite struct AgentAskerTests {
    @Test func thisProcessIsDescribedWithItsParents() {
        let asker = AgentAsker.resolve(pid: getpid(), via: "authkit ssh dev")
        #expect(asker.pid == getpid())
        #expect(asker.executable == AgentAsker.ownExecutable)
        #expect(asker.chain.count >= 2 || getppid() <= 1)
        #expect(asker.session != nil)
        #expect(asker.summary.hasSuffix(", via authkit ssh dev"))
    }

    /// In a pid namespace whose session leader is outside (`docker exec`, `unshare --pid`, a CI
    /// runner) the kernel shows session 0: the session is then the outermost process the
    /// namespace shows, so two requests of one tree share a `once` yes and another tree does not.
    @Test func aSessionLeaderOutsideThePidNamespaceFallsBackToTheOutermostAncestor() throws {
        let root = try TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        func process(_ pid: Int32, parent: Int32, session: Int32, start: Int) throws {
            let folder = root.appendingPathComponent("\(pid)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let stat = "\(pid) (p\(pid)) S \(parent) \(pid) \(session) 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 \(start) 0 0"
            try Data(stat.utf8).write(to: folder.appendingPathComponent("stat"))
            try Data("p\(pid)\0".utf8).write(to: folder.appendingPathComponent("cmdline"))
        }
        try process(40, parent: 0, session: 0, start: 100)
        try process(41, parent: 40, session: 0, start: 101)
        try process(42, parent: 41, session: 0, start: 102)
        try process(43, parent: 40, session: 0, start: 103)
        try process(50, parent: 1, session: 0, start: 104)
        try process(51, parent: 50, session: 0, start: 105)
        try process(60, parent: 61, session: 0, start: 106)
        let first = AgentAsker.resolve(pid: 42, root: root.path)
        #expect(first.session == "40@100" && first.chain.map(\.pid) == [42, 41, 40])
        #expect(AgentAsker.resolve(pid: 43, root: root.path).session == "40@100")
        #expect(AgentAsker.resolve(pid: 51, root: root.path).session == "50@104")
        // A parent that is gone: no session, so nothing is remembered for it.
        #expect(AgentAsker.resolve(pid: 60, root: root.path).session == nil)
    }

    /// A synthetic `/proc`: each process's stat, command line and executable link.
    struct FakeProc {
        let root: URL
        init() throws { root = try TestPaths.makeTemporaryDirectory() }
        func add(_ pid: Int32, parent: Int32, session: Int32, name: String, exe: String, _ arguments: [String]) throws {
            let folder = root.appendingPathComponent("\(pid)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let stat = "\(pid) (\(name)) S \(parent) \(pid) \(session) 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 \(1000 + Int(pid)) 0 0"
            try Data(stat.utf8).write(to: folder.appendingPathComponent("stat"))
            try Data(arguments.map { $0 + "\0" }.joined().utf8).write(to: folder.appendingPathComponent("cmdline"))
            try FileManager.default.createSymbolicLink(atPath: folder.appendingPathComponent("exe").path, withDestinationPath: exe)
        }
        func remove() { try? FileManager.default.removeItem(at: root) }
    }

    /// Attribution names the command and the shell it was typed in (not `su` above it), a
    /// program through authkit with authkit's own pid, what `exec` runs, a script; and a process
    /// that merely calls itself `authkit` (`prctl(PR_SET_NAME)`) is not authkit — it is named
    /// with its executable, and its word about a `program` is never taken.
    @Test func theCommandAndItsShellAndTheAskersOwnPidAreNamed() throws {
        let proc = try FakeProc()
        defer { proc.remove() }
        let authkit = "/usr/lib/authkit/authkit"
        try proc.add(80, parent: 1, session: 80, name: "sshd", exe: "/usr/sbin/sshd", ["sshd: ada [priv]"])
        try proc.add(90, parent: 80, session: 90, name: "su", exe: "/usr/bin/su", ["su", "-", "ada"])
        try proc.add(100, parent: 90, session: 90, name: "bash", exe: "/usr/bin/bash", ["-bash"])
        try proc.add(120, parent: 100, session: 90, name: "authkit", exe: authkit, ["authkit", "token", "--group", "g"])
        try proc.add(121, parent: 100, session: 90, name: "authkit", exe: authkit, ["authkit", "exec", "--", "curl"])
        try proc.add(105, parent: 100, session: 90, name: "git", exe: "/usr/bin/git", ["git", "fetch"])
        try proc.add(110, parent: 105, session: 90, name: "git-remote-http", exe: "/usr/lib/git-core/git-remote-http", ["git-remote-http"])
        try proc.add(115, parent: 110, session: 90, name: "sh", exe: "/usr/bin/dash", ["/bin/sh", "-c", "authkit credential git get"])
        try proc.add(116, parent: 115, session: 90, name: "authkit", exe: authkit, ["authkit", "credential", "git", "get"])
        try proc.add(130, parent: 100, session: 90, name: "authkit", exe: "/usr/bin/python3.11", ["python3", "steal.py"])
        try proc.add(135, parent: 1, session: 135, name: "bash", exe: "/usr/bin/bash", ["bash", "deploy.sh"])
        try proc.add(140, parent: 135, session: 135, name: "authkit", exe: authkit + " (deleted)", ["authkit", "token"])
        // The lean client beside authkit is authkit too; one elsewhere is not.
        try proc.add(150, parent: 100, session: 90, name: "authkit-lean", exe: authkit + "-lean", ["authkit-lean", "token"])
        try proc.add(151, parent: 115, session: 90, name: "authkit-lean", exe: authkit + "-lean", ["authkit-lean", "token"])
        try proc.add(152, parent: 100, session: 90, name: "authkit-lean", exe: "/tmp/authkit-lean", ["authkit-lean", "token"])
        // Installed (the package, the tarball): authkit in bin/, the lean client in lib/authkit/.
        try proc.add(
            160, parent: 115, session: 90, name: "git-credential-", exe: "/usr/lib/authkit/authkit-lean", ["git-credential-authkit", "get"])
        try proc.add(
            161, parent: 115, session: 90, name: "git-credential-", exe: "/usr/lib/other/authkit-lean", ["git-credential-authkit", "get"])

        let typed = AgentAsker.resolve(pid: 120, authkit: authkit, root: proc.root.path)
        #expect(typed.summary == "authkit token (pid 120) typed in bash (pid 100) ← su", "\(typed.summary)")
        #expect(typed.programs.map(\.pid) == [100] && typed.process?.pid == 100)

        var exec = AgentAsker.resolve(pid: 121, authkit: authkit, root: proc.root.path)
        exec.program = "/usr/bin/curl"
        #expect(exec.summary == "/usr/bin/curl run by authkit exec (pid 121), typed in bash (pid 100) ← su", "\(exec.summary)")

        let git = AgentAsker.resolve(pid: 116, authkit: authkit, root: proc.root.path)
        #expect(git.summary == "git-remote-http (pid 110) ← git ← bash ← su, through authkit credential git (pid 116)", "\(git.summary)")
        #expect(git.programs.map(\.name) == ["git-remote-http", "git", "su"])

        let impostor = AgentAsker.resolve(pid: 130, authkit: authkit, root: proc.root.path)
        #expect(impostor.chain.first?.isAuthkit == false)
        #expect(impostor.summary == "authkit [python3.11] (pid 130) ← bash ← su", "\(impostor.summary)")
        #expect(!AgentGroupRule(allow: ["git"]).allows(impostor))

        let lean = AgentAsker.resolve(pid: 150, authkit: authkit, root: proc.root.path)
        #expect(lean.chain.first?.isAuthkit == true && lean.programs.map(\.pid) == [100], "\(lean.summary)")
        let leanForGit = AgentAsker.resolve(pid: 151, authkit: authkit, root: proc.root.path)
        #expect(leanForGit.programs.map(\.name) == ["git-remote-http", "git", "su"], "\(leanForGit.summary)")
        #expect(AgentGroupRule(allow: ["git"]).allows(leanForGit))
        let elsewhere = AgentAsker.resolve(pid: 152, authkit: authkit, root: proc.root.path)
        #expect(elsewhere.chain.first?.isAuthkit == false)
        // The agent as installed, /usr/bin/authkit: git's helper link runs /usr/lib/authkit/authkit-lean.
        let installed = AgentAsker.resolve(pid: 160, authkit: "/usr/bin/authkit", root: proc.root.path)
        #expect(installed.chain.first?.isAuthkit == true, "\(installed.summary)")
        #expect(installed.programs.map(\.name) == ["git-remote-http", "git", "su"], "\(installed.summary)")
        let otherLib = AgentAsker.resolve(pid: 161, authkit: "/usr/bin/authkit", root: proc.root.path)
        #expect(otherLib.chain.first?.isAuthkit == false, "\(otherLib.summary)")
        #expect(!AgentAsker.isAuthkit("/usr/lib/authkit/authkit-lean", agent: "/opt/bin/authkit"))

        let script = AgentAsker.resolve(pid: 140, authkit: authkit, root: proc.root.path)
        #expect(
            script.summary == "authkit token (pid 140) run by bash deploy.sh (pid 135)",
            "an upgraded authkit is still authkit: \(script.summary)")
    }

    @Test func aPidThatIsGoneIsExitedNeverAnotherName() {
        let asker = AgentAsker.resolve(pid: Int32.max - 1)
        #expect(asker.chain.isEmpty && asker.pid == nil)
        #expect(asker.summary == "a process that has exited")
    }

    @Test func statNamesAndCommandLinesAreReadSafely() {
        let stat = ProcStat(Array("42 (a) b (c) S 7 42 42 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 12345 0 0".utf8))
        #expect(stat?.name == "a) b (c" && stat?.parent == 7 && stat?.session == 42 && stat?.startTime == 12345)
        #expect(ProcStat(Array("42 (x".utf8)) == nil)
        let line = ProcText.commandLine(Array("curl\0-H\0x\u{1B}[31m\n\u{202E}evil".utf8), limit: 200)
        #expect(line == "curl -H x?[31m??evil")
        // Format characters and separators too: a bidirectional mark, a line separator, a
        // zero-width space, a byte order mark, a private-use character.
        let formats = ProcText.commandLine(Array("git\0\u{200F}a\u{2028}b\u{200B}c\u{FEFF}d\u{E000}e\u{2069}".utf8), limit: 200)
        #expect(formats == "git ?a?b?c?d?e?")
        #expect(ProcText.cleaned("su\u{202E}tig", limit: 64) == "su?tig")
        #expect(ProcText.commandLine(Array(repeating: UInt8(ascii: "a"), count: 1000), limit: 200).count == 201)
        // A token on a command line never reaches the log; paths, URLs and words stay.
        let jwt = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.c2lnbmF0dXJlMTIz"
        let withToken = ProcText.commandLine(
            Array(
                "tool\0--token=\(jwt)\0-H\0Authorization: Bearer ghp_0123456789abcdefABCDEF0123456789abcd\0/usr/lib/git-core/git-remote-http\0https://dev.example.com/org/repo.git"
                    .utf8),
            limit: 400)
        #expect(!withToken.contains("eyJ") && !withToken.contains("ghp_"), "\(withToken)")
        // A token in a URL's or a path's segment goes; the rest of the path stays.
        let hook = ProcText.commandLine(
            Array("curl\0https://hooks.example.com/services/T0001/hook/Xk29dKq81LmZpA07bNc3VyHw55Rt\0/home/ada/projects/repo".utf8),
            limit: 400)
        #expect(hook == "curl https://hooks.example.com/services/T0001/hook/[redacted] /home/ada/projects/repo", "\(hook)")
        #expect(ProcText.redacted("wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY") == "[redacted]", "a secret key with slashes")
        #expect(
            withToken.contains(
                "tool [redacted] -H Authorization: Bearer [redacted] /usr/lib/git-core/git-remote-http https://dev.example.com/org/repo.git"
            ), "\(withToken)")
        #expect(
            ProcText.unit(fromCgroup: Array("0::/user.slice/user-1000.slice/user@1000.service/app.slice/git-sync.service\n".utf8))
                == "git-sync.service")
        #expect(
            ProcText.unit(fromCgroup: Array("0::/system.slice/docker-0123456789abcdef0123.scope\n".utf8))?.hasPrefix("container docker-")
                == true)
    }

    @Test func theJournalDatagramKeepsEachValueOnItsLine() {
        var event = AgentEvent(time: 1, kind: .refused, group: "g")
        event.reason = "bad\nMESSAGE=forged"
        let text = String(decoding: AgentJournal.datagram(event, message: "m"), as: UTF8.self)
        #expect(text.contains("SYSLOG_IDENTIFIER=authkit\n") && text.contains("AUTHKIT_EVENT=refused\n") && text.contains("PRIORITY=4\n"))
        #expect(text.contains("AUTHKIT_REASON=bad?MESSAGE=forged\n"))
        #expect(!text.contains("\nMESSAGE=forged"))
    }

    @Test func anAskpassThatHangsIsANo() async {
        // Timed on the thread that waits, so a busy test run's scheduling does not count: a
        // program still running at the bound is killed (else this takes the sleep's 120 s).
        let timed = try? await offThePool { () -> (Bool, Duration) in
            let started = ContinuousClock.now
            let answer = AgentAskpass.run("/bin/sleep", "120", timeout: .seconds(1))
            return (answer, ContinuousClock.now - started)
        }
        let (answer, waited) = timed ?? (true, .seconds(999))
        #expect(answer == false)
        #expect(waited < .seconds(60), "the hanging program was not killed at the bound: \(waited)")
        #expect(await AgentAskpass(program: "/bin/true").ask("q") == true)
        #expect(await AgentAskpass(program: "/bin/false").ask("q") == false)
        #expect(await AgentAskpass(program: "/nonexistent").ask("q") == false)
    }
}
