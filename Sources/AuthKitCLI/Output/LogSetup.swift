import Logging

#if canImport(Glibc)
import Glibc
#endif

/// `AUTHKIT_LOG=debug` (or `trace`, `info` …) sends AuthKit's log to standard error: lock
/// waits, refreshes, key-set fetches and refetch decisions, discovery, where a sign-in was
/// stored. Tokens, codes, verifiers and secrets are never logged. Without the variable
/// nothing is logged below warnings.
enum LogSetup {
    /// The command's own log (errors' full text at debug).
    static let logger = Logger(label: "authkit")

    /// The agent's log: what it serves and refuses (never a token) on standard error, at
    /// `level` unless AUTHKIT_LOG says otherwise — `info` for an agent or a forward of its own
    /// (systemd's journal keeps it), `warning` inside a terminal session such as `authkit ssh`'s.
    static func agentLogger(level: Logger.Level = .info) -> Logger {
        var logger = Logger(label: "authkit.agent") { StreamLogHandler.standardError(label: $0) }
        let chosen = getenv("AUTHKIT_LOG").flatMap { Logger.Level(rawValue: String(cString: $0).lowercased()) }
        logger.logLevel = chosen ?? level
        return logger
    }

    static func bootstrapFromEnvironment() {
        // getenv, not ProcessInfo: this runs on every start, including `authkit token`'s.
        guard let raw = getenv("AUTHKIT_LOG") else { return }
        let value = String(cString: raw).lowercased()
        guard !value.isEmpty else { return }
        guard let level = Logger.Level(rawValue: value) else {
            // A typo must not silently mean "debug" (or nothing): say so, as for any bad setting.
            Terminal.printError(
                Voice.error("AUTHKIT_LOG=‘\(value)’ is not a log level", hint: "use trace, debug, info, notice, warning, error or critical")
            )
            exit(2)
        }
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
    }
}
