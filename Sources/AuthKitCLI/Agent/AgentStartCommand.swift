import ArgumentParser
import AuthKit
import ChildProcess
import Logging

#if canImport(Glibc)
import Glibc
#endif

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `authkit agent start`: an agent in the background, printing what to export (ssh-agent's way).
struct AgentStartCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "start",
        abstract: "Start the agent in the background and print the shell commands that point tools at it.",
        discussion: """
            Use as `eval "$(authkit agent start)"`. Without a runtime directory (XDG_RUNTIME_DIR) \
            the socket goes into a new private directory under /tmp, which the printed \
            AUTHKIT_AGENT_SOCK names. An agent already serving the socket is left running.
            """)

    @OptionGroup var socket: AgentSocketOption

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        let path: String
        do throws(AgentServer.Failure) {
            if let chosen = socket.path() {
                path = chosen
            } else {
                path = try AgentServer.privateDirectory(environment: environment) + "/agent.sock"
            }
        } catch {
            Terminal.printError(Voice.error(error.description))
            throw ExitStatus.usage
        }
        if case .answer(let hello) = await AgentClient(path: path).send(AgentRequest.hello), hello.ok {
            Terminal.printError("authkit: an agent already serves \(path) (pid \(hello.pid.map(String.init) ?? "?")).")
            Terminal.printOut(Self.exports(path: path, pid: hello.pid))
            return
        }
        let arguments = [Setup.executablePath(), "agent", "run", "--socket", path]
        var options = ChildProcess.Options(arguments)
        options.newProcessGroup = true
        let spawned: ChildProcess.Spawned
        do { spawned = try ChildProcess.spawn(options) } catch {
            Terminal.printError(Voice.error(error.description))
            throw ExitStatus.usage
        }
        // Up to five seconds for it to answer; it is not our child to reap after that
        // (a double fork is not needed: it outlives us and init adopts it).
        for _ in 0..<100 {
            if case .answer(let hello) = await AgentClient(path: path).send(AgentRequest.hello), hello.ok {
                Terminal.printOut(Self.exports(path: path, pid: hello.pid))
                return
            }
            if let end = ChildProcess.poll(spawned.pid) {
                Terminal.printError(
                    Voice.error(
                        "the agent did not start (exit \(end.status))", hint: "run `authkit agent run --socket \(path)` to see why"))
                throw ExitStatus.usage
            }
            try? await Task.sleep(for: .milliseconds(50))
        }
        Terminal.printError(Voice.error("the agent did not answer within 5 s", hint: "run `authkit agent run --socket \(path)` to see why"))
        throw ExitStatus.usage
    }

    static func exports(path: String, pid: Int32?) -> String {
        "AUTHKIT_AGENT_SOCK=\(Setup.shellQuoted(path)); export AUTHKIT_AGENT_SOCK;\necho authkit agent pid \(pid.map(String.init) ?? "?");"
    }
}
