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
            it is not there: the same answers either way, only faster. It holds access tokens \
            and id_tokens only; refresh tokens stay in the store. AUTHKIT_AGENT=off bypasses it.

              authkit setup agent             # systemd: start it with the session
              eval "$(authkit agent start)"   # no systemd user session: this shell's
              eval "$(authkit agent stop)"
              authkit agent status            # tokens served and refused per group
              authkit agent log --follow      # who got, was refused or was asked
              authkit ssh HOST                # the sign-in in an SSH session
              authkit agent forward --socket /tmp/ak/agent.sock   # for a container

            Asking first: a [group "NAME"] section of the config file (authkit help \
            config) makes the agent ask a person before it hands out the group's tokens \
            (confirm = always, once or never) and refuse the programs it does not list \
            (allow = git kubectl ...). The agent asks through AUTHKIT_ASKPASS: the absolute \
            path of a program that gets the question as its argument and exits 0 for yes, \
            as with SSH_ASKPASS; with no way to ask, the answer is no. `authkit agent \
            forward --confirm` asks on its own terminal before each new connection's first \
            token. Every token served, refused, asked about and allowed is in `authkit agent \
            log` (never a token), and, where systemd's journal runs, in `journalctl --user \
            -t authkit`. A command that reads the store itself is not asked and not logged.

            See the README ("Approval and the audit log") and docs/agent.md, shipped in \
            share/doc/authkit/, and docs/agent-protocol.md.
            """,
        subcommands: [
            AgentStartCommand.self, AgentStopCommand.self, AgentStatusCommand.self, AgentLogCommand.self, AgentRunCommand.self,
            AgentForwardCommand.self, AgentSandboxFilterCommand.self,
        ]
    )
}
