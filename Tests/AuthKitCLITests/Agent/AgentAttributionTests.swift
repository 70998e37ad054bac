import AuthKit
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Who is asking, with real clients: git through the authkit helper and curl through `authkit
/// exec` ask a real agent whose group needs a yes (`confirm = once`, answered by an
/// `AUTHKIT_ASKPASS` script that logs its question); `authkit agent log` and a journal socket
/// name each asker and never a token; an `allow` list refuses a program not on it; a sandbox's
/// request through `authkit agent forward` is logged with the forward.
@Suite struct AgentAttributionTests {
    /// A journal stand-in in the world's scratch folder: a datagram socket whose messages go
    /// to a file, each followed by `--`.
    final class Journal: Sendable {
        let socket: String
        let file: String
        let process: TestProcess

        init(_ world: CLIHarness) async throws {
            socket = world.scratch.path + "/journal.sock"
            file = world.scratch.path + "/journal.log"
            let script = """
                import socket, sys
                s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); s.bind(sys.argv[1])
                print("ready", flush=True)
                with open(sys.argv[2], "ab", buffering=0) as out:
                    while True:
                        out.write(s.recv(65536) + b"--\\n")
                """
            process = try TestProcess(TestPaths.python, ["-c", script, socket, file], environment: world.environment)
            let process = self.process
            #expect(try await offThePool { process.firstStdoutLine(timeout: 30) } == "ready")
        }

        /// What arrived so far (after a moment for datagrams under way).
        func text() async throws -> String {
            let file = self.file
            return try await offThePool {
                Thread.sleep(forTimeInterval: 0.5)
                return (try? String(contentsOfFile: file, encoding: .utf8)) ?? ""
            }
        }

        func stop() {
            process.kill()
            process.wait(timeout: 10)
        }
    }

    @Test func gitAndExecAreNamedAskedOnceAndLoggedWithoutTheToken() async throws {
        let git = try await GitCredentialTests.GitWorld.start()
        defer { git.stop() }
        let world = git.world
        let scratch = world.scratch.path
        // The person's answers: an askpass program that logs each question and says what the
        // file `answer` says.
        let askpass = scratch + "/askpass"
        try "#!/bin/sh\nprintf '%s\\n' \"$1\" >> \(scratch)/questions\n[ \"$(cat \(scratch)/answer)\" = yes ]\n".write(
            toFile: askpass, atomically: false, encoding: .utf8)
        chmod(askpass, 0o755)
        try "yes".write(toFile: scratch + "/answer", atomically: false, encoding: .utf8)
        let config = world.configDirectory.appendingPathComponent("config")
        try FileManager.default.createDirectory(at: world.configDirectory, withIntermediateDirectories: true)
        let rules = "[group \"\(world.group)\"]\nconfirm = once\nconfirm_for = 10m\n"
        try rules.write(to: config, atomically: false, encoding: .utf8)

        let journal = try await Journal(world)
        defer { journal.stop() }
        let socket = scratch + "/agent.sock"
        var agentEnvironment = world.environment
        agentEnvironment["AUTHKIT_ASKPASS"] = askpass
        agentEnvironment["AUTHKIT_JOURNAL_SOCKET"] = journal.socket
        let agent = try TestProcess(TestPaths.product("authkit"), ["agent", "run", "--socket", socket], environment: agentEnvironment)
        defer {
            agent.send(signal: SIGTERM)
            agent.wait(timeout: 10)
        }
        try await until("the agent listens", timeout: .seconds(30)) { !agent.isRunning || agent.stderrSoFar.contains("agent listening") }

        var environment = git.environment
        environment["AUTHKIT_AGENT_SOCK"] = socket
        let setup = try await world.authkit(["setup", "git", "--host", git.url, "--group", world.group], environment: environment)
        #expect(setup.status == 0, "\(setup.stderr)")
        // `setup git` rewrote the config file: the group's rules go back in.
        let written = try String(contentsOf: config, encoding: .utf8)
        if !written.contains("[group ") { try (written + "\n" + rules).write(to: config, atomically: false, encoding: .utf8) }
        try await Task.sleep(for: .seconds(1.2))

        let clone = world.scratch.appendingPathComponent("clone")
        let gitEnvironment = environment
        let run: @Sendable ([String]) throws -> ProcessResult = { arguments in
            try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/git"), arguments, environment: gitEnvironment, timeout: 60)
        }
        let cloned = try await offThePool { try run(["clone", "-q", git.url + "/repo.git", clone.path]) }
        #expect(cloned.status == 0, "\(cloned.stderr)")
        let fetched = try await offThePool { try run(["-C", clone.path, "fetch", "-q"]) }
        #expect(fetched.status == 0, "\(fetched.stderr)")
        let questions = (try? String(contentsOfFile: scratch + "/questions", encoding: .utf8)) ?? ""
        #expect(questions.split(separator: "\n").count == 1, "once: one question for this session, not one per request: \(questions)")
        #expect(questions.contains("git") && questions.contains(world.group), "the question names git and the group: \(questions)")
        #expect(questions.hasPrefix("authkit: ") && questions.contains("asks for an access token of \(world.group)"), "\(questions)")

        // curl through `authkit exec`: named as the program the token is for.
        let exec = try await world.authkit(
            ["exec", "--group", world.group, "--", "/usr/bin/curl", "-s", "-o", "/dev/null", git.url + "/"], environment: environment)
        #expect(exec.status == 0, "\(exec.stderr)")

        let log = try await world.authkit(["agent", "log", "--json", "--socket", socket])
        #expect(log.status == 0, "\(log.stderr)")
        let events = log.stdout.split(separator: "\n").compactMap { try? PeerJSON(data: Data($0.utf8)) }
        let served = events.filter { $0["kind"] == "served" }
        #expect(served.contains { ($0["asker"].string ?? "").hasPrefix("git") || ($0["asker"].string ?? "").hasPrefix("git-remote") })
        #expect(served.contains { ($0["asker"].string ?? "").hasPrefix("/usr/bin/curl run by") }, "\(log.stdout)")
        #expect(events.contains { $0["kind"] == "asked" } && events.contains { $0["kind"] == "allowed" })
        let human = try await world.authkit(["agent", "log", "--group", world.group, "--socket", socket])
        #expect(human.stdout.contains("served token \(world.group)"), "\(human.stdout)")
        let status = try await world.authkit(["agent", "status", "--socket", socket])
        #expect(status.stdout.contains("\(world.group): \(served.count) served"), "\(status.stdout)")

        // An allow list without curl: exec is refused, git still gets its token.
        try (written.contains("[group ") ? written : written + "\n" + rules).replacingOccurrences(
            of: "confirm = once", with: "confirm = never\nallow = git"
        ).write(to: config, atomically: false, encoding: .utf8)
        try await Task.sleep(for: .seconds(1.2))
        let refused = try await world.authkit(
            ["exec", "--group", world.group, "--", "/usr/bin/curl", "-s", "-o", "/dev/null", git.url + "/"], environment: environment)
        #expect(refused.status == 10 && refused.stderr.contains("allow list"), "\(refused.status) \(refused.stderr)")
        let again = try await offThePool { try run(["-C", clone.path, "fetch", "-q"]) }
        #expect(again.status == 0, "\(again.stderr)")

        // `confirm = always` and a no: git fails, the refusal is logged with the reason.
        try (written.contains("[group ") ? written : written + "\n" + rules).replacingOccurrences(
            of: "confirm = once", with: "confirm = always"
        ).write(to: config, atomically: false, encoding: .utf8)
        try "no".write(toFile: scratch + "/answer", atomically: false, encoding: .utf8)
        try await Task.sleep(for: .seconds(1.2))
        try await git.server.rejectNext(1)
        let denied = try await offThePool { try run(["-C", clone.path, "fetch", "-q"]) }
        #expect(denied.status != 0, "git fails: \(denied.status)")
        let afterNo = try await world.authkit(["agent", "log", "--json", "--socket", socket])
        #expect(afterNo.stdout.contains("said no or did not answer"), "\(afterNo.stdout)")

        let journalText = try await journal.text()
        #expect(journalText.contains("SYSLOG_IDENTIFIER=authkit\n") && journalText.contains("AUTHKIT_EVENT=served\n"))
        #expect(journalText.contains("AUTHKIT_ASKER_EXE=/usr/bin/git") || journalText.contains("AUTHKIT_ASKER_EXE=/usr/lib/git-core/"))
        for record in [log, afterNo, human, status] { world.recordExternal("authkit", ["agent", "log"], record) }
        world.recordExternal("journal", [], ProcessResult(status: 0, stdout: journalText, stderr: "", timedOut: false))
        world.recordExternal("askpass", [], ProcessResult(status: 0, stdout: questions, stderr: "", timedOut: false))
        try await world.assertNoSecretsLeaked()
    }

    /// A process that names itself `authkit` (`prctl(PR_SET_NAME)`) and claims to ask for git is
    /// not believed: with `allow = git` it is refused, and the log names it — its own pid, its
    /// real executable — never git.
    @Test func aProcessCallingItselfAuthkitIsNotBelieved() async throws {
        let world = try await CLIHarness.start()
        defer { world.stop() }
        try await world.signIn()
        try FileManager.default.createDirectory(at: world.configDirectory, withIntermediateDirectories: true)
        try "[group \"\(world.group)\"]\nallow = git\n".write(
            to: world.configDirectory.appendingPathComponent("config"), atomically: false, encoding: .utf8)
        try await world.startAgent()
        let impostor = """
            import ctypes, json, os, socket, sys
            ctypes.CDLL(None).prctl(15, b"authkit", 0, 0, 0)
            s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
            s.sendall(json.dumps({"v": 1, "op": "token", "group": sys.argv[2], "program": "/usr/bin/git"}).encode() + b"\\n")
            answer = json.loads(s.makefile().readline())
            print(os.getpid(), answer.get("ok"), answer.get("error", {}).get("code"))
            """
        let asked = try await offThePool {
            try ProcessRunner.run(
                TestPaths.python, ["-c", impostor, world.agentSocket, world.group], environment: world.environment, timeout: 30)
        }
        let words = asked.stdout.split(separator: " ").map(String.init)
        #expect(words.count == 3 && words[1] == "False" && words[2].hasPrefix("refused"), "\(asked.stdout) \(asked.stderr)")
        let log = try await world.authkit(["agent", "log", "--json", "--socket", world.agentSocket])
        let refused = log.stdout.split(separator: "\n").compactMap { try? PeerJSON(data: Data($0.utf8)) }.filter { $0["kind"] == "refused" }
        let asker = refused.last?["asker"].string ?? ""
        #expect(asker.hasPrefix("authkit [python") && asker.contains("(pid \(words.first ?? "?"))"), "\(log.stdout)")
        #expect(!log.stdout.contains("/usr/bin/git"), "the claimed program is not recorded: \(log.stdout)")
    }

    @Test func aSandboxsRequestIsLoggedWithTheForward() async throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/bwrap") else {
            Issue.record("bubblewrap is missing: run ./scripts/bootstrap")
            return
        }
        let world = try await CLIHarness.start()
        defer { world.stop() }
        try await world.signIn()
        let scratch = world.scratch.path
        let journal = try await Journal(world)
        defer { journal.stop() }
        let socket = scratch + "/forward.sock"
        var environment = world.environment
        environment["AUTHKIT_JOURNAL_SOCKET"] = journal.socket
        let forward = try TestProcess(
            TestPaths.product("authkit"), ["agent", "forward", "--group", world.group, "--socket", socket], environment: environment)
        defer {
            forward.send(signal: SIGTERM)
            forward.wait(timeout: 10)
        }
        #expect(try await offThePool { forward.firstStdoutLine(timeout: 30) } == socket)
        let inside = try await offThePool { try AgentForwardTests.sandboxed(["authkit", "token", "--group", world.group], socket: socket) }
        #expect(inside.status == 0, "\(inside.stderr)")
        var text = try await journal.text()
        #expect(text.contains("AUTHKIT_VIA=authkit agent forward (\(socket))"), "\(text)")
        #expect(text.contains("AUTHKIT_EVENT=served") && text.contains("AUTHKIT_ASKER=") && text.contains("bwrap"), "\(text)")
        // The forward's start and its end by a signal (Ctrl-C) are logged, with what it served.
        #expect(text.contains("AUTHKIT_EVENT=opened") && text.contains("(groups: \(world.group))"), "\(text)")
        #expect(!text.contains("AUTHKIT_EVENT=closed"), "\(text)")
        forward.send(signal: SIGINT)
        forward.wait(timeout: 10)
        text = try await journal.text()
        #expect(text.contains("MESSAGE=forward authkit agent forward (\(socket)) closed (groups: \(world.group))"), "\(text)")
        world.recordExternal("journal", [], ProcessResult(status: 0, stdout: text, stderr: "", timedOut: false))
        try await world.assertNoSecretsLeaked()
    }

    @Test func aRemoteRequestThroughAuthkitSSHIsLoggedWithTheForward() async throws {
        if let reason = TestSSHServer.unavailableReason {
            Issue.record(Comment(rawValue: "cannot run sshd: \(reason)"))
            return
        }
        let world = try await CLIHarness.start()
        defer { world.stop() }
        try await world.signIn()
        let server = try await offThePool { try TestSSHServer() }
        defer { server.stop() }
        let journal = try await Journal(world)
        defer { journal.stop() }
        let reachable = try ReachableCopy(of: TestPaths.product("authkit"))
        defer { reachable.remove() }
        var journaled = world.environment
        journaled["AUTHKIT_JOURNAL_SOCKET"] = journal.socket
        let environment = journaled
        let command =
            "env -i PATH=/usr/bin:/bin HOME=/tmp AUTHKIT_AGENT_SOCK=\"$AUTHKIT_AGENT_SOCK\" AUTHKIT_FORWARD_KEY=\"$AUTHKIT_FORWARD_KEY\" \(reachable.url.path) token --group \(world.group)"
        let arguments = ["ssh", "--group", world.group, "--"] + server.clientOptions + [server.destination, command]
        let remote = try await offThePool {
            try ProcessRunner.run(TestPaths.product("authkit"), arguments, environment: environment, timeout: 60)
        }
        world.recordExternal("authkit", ["token", "--group", world.group], remote)
        #expect(remote.status == 0, "\(remote.stderr)")
        let text = try await journal.text()
        #expect(text.contains("AUTHKIT_VIA=authkit ssh \(server.destination)") && text.contains("AUTHKIT_EVENT=served"), "\(text)")
        world.recordExternal("journal", [], ProcessResult(status: 0, stdout: text, stderr: "", timedOut: false))
        try await world.assertNoSecretsLeaked()
    }
}
