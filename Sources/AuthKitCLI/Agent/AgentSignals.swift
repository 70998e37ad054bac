import AuthKitCore
import ArgumentParser
import AuthKit
import ChildProcess
import Logging
import Synchronization

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
        prepareHandlerState()
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

    /// The journal datagram a handler sends before the process ends (a forward's "closed"),
    /// built ahead — a handler may only make system calls — and sent only while armed: the
    /// forward that said "closed" itself disarms it.
    nonisolated(unsafe) static var farewell: (address: UnsafePointer<sockaddr>, bytes: UnsafeRawBufferPointer)?
    static let farewellArmed = Atomic<Bool>(false)

    /// Builds and arms ``farewell``; call before the handlers are installed.
    static func sayOnSignal(journal: String, datagram: [UInt8]) {
        guard let address = AgentSocket.address(journal) else { return }
        let stored = UnsafeMutablePointer<sockaddr_un>.allocate(capacity: 1)
        stored.initialize(to: address)
        let bytes = UnsafeMutableRawBufferPointer.allocate(byteCount: datagram.count, alignment: 1)
        bytes.copyBytes(from: datagram)
        farewell = (UnsafeRawPointer(stored).assumingMemoryBound(to: sockaddr.self), UnsafeRawBufferPointer(bytes))
        farewellArmed.store(true, ordering: .releasing)
    }

    /// The forward said "closed" itself: a signal from now on says nothing more.
    static func disarmFarewell() {
        farewellArmed.store(false, ordering: .releasing)
    }

    /// Sends ``farewell`` when armed (async-signal-safe: an atomic load, socket, sendto, close).
    static func sayFarewell() {
        guard farewellArmed.load(ordering: .acquiring), let (address, bytes) = farewell else { return }
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return }
        _ = sendto(
            fd, bytes.baseAddress, bytes.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL), address, socklen_t(MemoryLayout<sockaddr_un>.size))
        close(fd)
    }

    /// Touches what the handlers read, so that no lazy global is first set up inside a handler
    /// (that may take a lock the interrupted thread holds).
    private static func prepareHandlerState() {
        _ = farewellArmed.load(ordering: .relaxed)
        _ = farewell
        _ = socketPath
        _ = identity
    }

    static func exitOnSignal() {
        prepareHandlerState()
        let handler: @convention(c) (Int32) -> Void = { _ in
            AgentSignals.sayFarewell()
            _exit(0)
        }
        signal(SIGTERM, handler)
        signal(SIGINT, handler)
    }
}
