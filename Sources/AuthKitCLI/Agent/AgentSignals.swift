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

/// On SIGTERM or SIGINT (and SIGHUP, for a server that ends with its terminal): the socket file
/// goes with the process (async-signal-safe calls only).
enum AgentSignals {
    nonisolated(unsafe) static var socketPath: UnsafeMutablePointer<CChar>?
    nonisolated(unsafe) static var identity = stat()

    static func removeOnSignal(_ path: String, hangup: Bool = false) {
        var info = stat()
        guard lstat(path, &info) == 0 else { return }
        identity = info
        socketPath = strdup(path)
        let handler: @convention(c) (Int32) -> Void = { _ in
            if let path = AgentSignals.socketPath {
                var now = stat()
                if lstat(path, &now) == 0, now.st_dev == AgentSignals.identity.st_dev, now.st_ino == AgentSignals.identity.st_ino {
                    unlink(path)
                }
            }
            _exit(0)
        }
        signal(SIGTERM, handler)
        signal(SIGINT, handler)
        // A hang-up that was already ignored (nohup) stays ignored: that was the user's choice.
        if hangup, let previous = signal(SIGHUP, handler), unsafeBitCast(previous, to: Int.self) == unsafeBitCast(SIG_IGN, to: Int.self) {
            signal(SIGHUP, SIG_IGN)
        }
    }

    static func exitOnSignal() {
        let handler: @convention(c) (Int32) -> Void = { _ in _exit(0) }
        signal(SIGTERM, handler)
        signal(SIGINT, handler)
    }
}
