import AuthKitCore
import AuthKit
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// What a hostile client of an agent's socket cannot do, on the real `authkit agent forward`
/// and `agent run`: lock everyone out with slow connections, make a forward wait for itself,
/// or have a live agent's socket taken over.
@Suite struct AgentSocketAbuseTests {
    /// A raw connection to `path` (close-on-exec), or nil.
    static func connect(_ path: String) -> Int32? {
        guard case .success(let fd) = AgentSocket.connect(path) else { return nil }
        return fd
    }

    /// Sends `text` and reads one line within `seconds`; nil when the agent closed or said nothing.
    static func exchange(_ fd: Int32, _ text: String, seconds: Int = 5) -> String? {
        let bytes = Array(text.utf8)
        guard bytes.withUnsafeBytes({ send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) == bytes.count else { return nil }
        return readLine(fd, seconds: seconds)
    }

    static func readLine(_ fd: Int32, seconds: Int) -> String? {
        var received: [UInt8] = []
        let deadline = Date().addingTimeInterval(TimeInterval(seconds))
        var chunk = [UInt8](repeating: 0, count: 4096)
        while Date() < deadline {
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 200) >= 0 else { return nil }
            guard poller.revents != 0 else { continue }
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { return nil }
            received += chunk[0..<count]
            if let end = received.firstIndex(of: 0x0A) { return String(decoding: received[..<end], as: UTF8.self) }
        }
        return nil
    }

    /// True when the agent closed `fd` within `seconds` (a read gives end of file).
    static func closedByAgent(_ fd: Int32, seconds: Int) -> Bool {
        let deadline = Date().addingTimeInterval(TimeInterval(seconds))
        var byte: UInt8 = 0
        while Date() < deadline {
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            if poll(&poller, 1, 200) > 0, recv(fd, &byte, 1, Int32(MSG_DONTWAIT)) <= 0 { return true }
        }
        return false
    }

    @Test func slowAndHalfSentConnectionsCannotLockAForwardOrGrowIt() async throws {
        let world = try await CLIHarness.start()
        defer { world.stop() }
        try await world.signIn()
        let (forward, socket) = try await AgentForwardTests.forward(world)
        defer {
            forward.send(signal: SIGTERM)
            forward.wait(timeout: 10)
        }
        // Every place a forward has (64), taken by connections that sent half a line.
        var held: [Int32] = []
        defer { held.forEach { close($0) } }
        for _ in 0..<64 {
            let fd = try #require(Self.connect(socket))
            let half = Array(#"{"v":1,"op":"hel"#.utf8)
            _ = half.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            held.append(fd)
        }
        let answer = try await offThePool { () -> String? in
            guard let fd = Self.connect(socket) else { return nil }
            defer { close(fd) }
            return Self.exchange(fd, #"{"v":1,"op":"hello"}"# + "\n")
        }
        #expect(
            answer?.contains(#""ok":true"#) == true, "a new client is answered although 64 connections are held: \(answer ?? "no answer")")

        // A line trickled byte by byte loses its connection once it takes longer than a line may.
        let trickler = try #require(Self.connect(socket))
        defer { close(trickler) }
        let started = Date()
        let closed = try await offThePool { () -> Bool in
            for byte in Array(#"{"v":1,"op":"hello"}"#.utf8) {
                var value = byte
                if send(trickler, &value, 1, Int32(MSG_NOSIGNAL)) != 1 { return true }
                if Self.closedByAgent(trickler, seconds: 2) { return true }
            }
            return false
        }
        #expect(
            closed && Date().timeIntervalSince(started) < 15, "a trickled line is cut off (after \(Date().timeIntervalSince(started)) s)")
        // An over-long request line is refused as such.
        let long = try #require(Self.connect(socket))
        defer { close(long) }
        let refusal = Self.exchange(long, #"{"v":1,"op":"token","group":""# + String(repeating: "x", count: 20_000) + "\"}\n")
        #expect(refusal?.contains("longer than") == true, "\(refusal ?? "no answer")")
    }

    @Test func aForwardGivenItsOwnSocketDoesNotWaitForItself() async throws {
        let world = try await CLIHarness.start()
        defer { world.stop() }
        try await world.signIn()
        let socket = world.scratch.path + "/self.sock"
        var environment = world.environment
        environment["AUTHKIT_AGENT_SOCK"] = socket
        let forward = try TestProcess(
            TestPaths.product("authkit"), ["agent", "forward", "--group", world.group, "--socket", socket], environment: environment)
        defer {
            forward.send(signal: SIGTERM)
            forward.wait(timeout: 10)
        }
        let printed = try await offThePool { forward.firstStdoutLine(timeout: 30) }
        try #require(printed == socket, "\(forward.stderrSoFar)")
        let started = Date()
        let token = try await world.authkit(["token", "--group", world.group], environment: ["AUTHKIT_AGENT_SOCK": socket], timeout: 60)
        #expect(token.status == 0, "\(token.stderr)")
        #expect(
            Date().timeIntervalSince(started) < 20, "answered at once, not after the 90 s bound: \(Date().timeIntervalSince(started)) s")
    }

    @Test func aBusyAgentsSocketIsNeverTakenOver() async throws {
        let world = try await CLIHarness.start()
        defer { world.stop() }
        let socket = world.scratch.path + "/busy.sock"
        // A live listener that accepts nothing, its queue full: a connect waits, then fails
        // with EAGAIN — not ECONNREFUSED, which alone says nobody listens.
        let script = """
            import socket, sys, time
            s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(0)
            held = []
            for _ in range(8):
                c = socket.socket(socket.AF_UNIX); c.setblocking(False)
                try: c.connect(sys.argv[1])
                except BlockingIOError: pass
                held.append(c)
            print("ready", flush=True)
            time.sleep(3600)
            """
        let listener = try TestProcess(TestPaths.python, ["-c", script, socket], environment: world.environment)
        defer {
            listener.kill()
            listener.wait(timeout: 10)
        }
        let ready = try await offThePool { listener.firstStdoutLine(timeout: 30) }
        try #require(ready == "ready", "\(listener.stderrSoFar)")
        var before = stat()
        #expect(lstat(socket, &before) == 0)
        let second = try await world.authkit(["agent", "run", "--socket", socket], timeout: 30)
        #expect(second.status != 0 && second.stderr.contains("left alone"), "\(second.status): \(second.stderr)")
        var after = stat()
        #expect(lstat(socket, &after) == 0 && after.st_ino == before.st_ino, "the live socket is still the listener's")
    }
}
