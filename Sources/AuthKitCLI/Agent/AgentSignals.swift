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
            AgentSignals.sayFarewell()
            _exit(0)
        }
        signal(SIGTERM, handler)
        signal(SIGINT, handler)
        // A hang-up that was already ignored (nohup) stays ignored: that was the user's choice.
        if hangup, let previous = signal(SIGHUP, handler), unsafeBitCast(previous, to: Int.self) == unsafeBitCast(SIG_IGN, to: Int.self) {
            signal(SIGHUP, SIG_IGN)
        }
    }

    /// A datagram for the journal that the handler sends before the process ends (a forward's
    /// "closed"), built ahead: a handler may only make system calls.
    nonisolated(unsafe) static var farewell: (address: UnsafeMutablePointer<sockaddr_un>, bytes: UnsafeMutableRawBufferPointer)?

    /// Sets ``farewell``; call before the handlers are installed.
    static func sayOnSignal(journal: String, datagram: [UInt8]) {
        guard let address = AgentSocket.address(journal) else { return }
        let stored = UnsafeMutablePointer<sockaddr_un>.allocate(capacity: 1)
        stored.initialize(to: address)
        let bytes = UnsafeMutableRawBufferPointer.allocate(byteCount: datagram.count, alignment: 1)
        bytes.copyBytes(from: datagram)
        farewell = (stored, bytes)
    }

    /// Sends ``farewell`` (async-signal-safe: socket, sendto, close).
    static func sayFarewell() {
        guard let (address, bytes) = farewell else { return }
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return }
        _ = address.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            sendto(fd, bytes.baseAddress, bytes.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL), $0, socklen_t(MemoryLayout<sockaddr_un>.size))
        }
        close(fd)
    }

    static func exitOnSignal() {
        let handler: @convention(c) (Int32) -> Void = { _ in
            AgentSignals.sayFarewell()
            _exit(0)
        }
        signal(SIGTERM, handler)
        signal(SIGINT, handler)
    }
}
