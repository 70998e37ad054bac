import SecretStore
import ChildProcess

#if canImport(Glibc)
import Glibc
#endif

/// Asks a person through a program, as `ssh-agent -c` does with `SSH_ASKPASS`: the program
/// gets the question as its one argument, shows it, and exits 0 for yes. Anything else — another
/// status, a crash, no answer within ``timeout`` — is no: never a silent yes.
package struct AgentAskpass: Sendable {
    package let program: String
    package var timeout: Duration = .seconds(60)

    /// `AUTHKIT_ASKPASS`, an absolute path, or nil.
    package init?(environment: [String: String]) {
        guard let program = environment["AUTHKIT_ASKPASS"], program.hasPrefix("/") else { return nil }
        self.program = program
    }

    package init(program: String) {
        self.program = program
    }

    /// The person's answer to `question`.
    package func ask(_ question: String) async -> Bool {
        let program = self.program
        let timeout = self.timeout
        return await OwnThread.run { Self.run(program, question, timeout: timeout) }
    }

    static func run(_ program: String, _ question: String, timeout: Duration) -> Bool {
        var options = ChildProcess.Options([program, question], environment: ChildProcess.currentEnvironment())
        options.newProcessGroup = true
        guard let child = try? ChildProcess.spawn(options) else { return false }
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let ended = ChildProcess.poll(child.pid) { return ended == .exited(0) }
            usleep(20_000)
        }
        kill(-child.pid, SIGKILL)
        _ = ChildProcess.wait(child.pid)
        return false
    }
}
