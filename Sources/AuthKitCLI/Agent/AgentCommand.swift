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

/// `authkit agent`: a per-user process that serves tokens from memory on a unix socket.
struct AgentCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "agent",
        abstract: "Serve tokens from memory to this user's tools, and forward them to SSH sessions and containers.",
        discussion: """
            The agent answers token requests on a unix socket, by default \
            $XDG_RUNTIME_DIR/authkit/agent.sock (AUTHKIT_AGENT_SOCK names another). `token`, \
            `exec` and the credential plug-ins ask it first and read the store themselves when \
            it is not there — the same answers either way, only faster. It holds access tokens \
            and id_tokens only; refresh tokens stay in the store. AUTHKIT_AGENT=off bypasses it.

              eval "$(authkit agent start)"     # no systemd: start one, export its socket
              authkit setup agent               # systemd: start it with the session
              authkit agent status
              authkit agent forward --group com.example.shared   # a restricted socket for a container

            See docs/agent.md and docs/agent-protocol.md.
            """,
        subcommands: [
            AgentStartCommand.self, AgentStopCommand.self, AgentStatusCommand.self, AgentLogCommand.self, AgentRunCommand.self,
            AgentForwardCommand.self, AgentSandboxFilterCommand.self,
        ]
    )
}
