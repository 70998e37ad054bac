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
        #expect(ProcText.commandLine(Array(repeating: UInt8(ascii: "a"), count: 1000), limit: 200).count == 201)
        // A token on a command line never reaches the log; paths, URLs and words stay.
        let jwt = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.c2lnbmF0dXJlMTIz"
        let withToken = ProcText.commandLine(
            Array(
                "tool\0--token=\(jwt)\0-H\0Authorization: Bearer ghp_0123456789abcdefABCDEF0123456789abcd\0/usr/lib/git-core/git-remote-http\0https://dev.example.com/org/repo.git"
                    .utf8),
            limit: 400)
        #expect(!withToken.contains("eyJ") && !withToken.contains("ghp_"), "\(withToken)")
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
