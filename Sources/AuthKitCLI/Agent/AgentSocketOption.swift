import AuthKitCore
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

/// Where the agent's socket is, as commands take it.
struct AgentSocketOption: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "The agent's socket (default: AUTHKIT_AGENT_SOCK, else $XDG_RUNTIME_DIR/authkit/agent.sock).", valueName: "path"))
    var socket: String?

    /// The socket to use, or nil when neither the option, the environment nor a runtime
    /// directory names one.
    func path() -> String? {
        if let socket { return socket }
        var environment = ProcessInfo.processInfo.environment
        environment["AUTHKIT_AGENT"] = nil
        return AgentExchange.socketPath(environment: environment)
    }
}
