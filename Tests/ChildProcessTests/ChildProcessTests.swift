@testable import ChildProcess
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Every child this package starts — the browser, the git and kubectl that `setup` runs, the
/// tests' own children — starts clean, whatever thread starts it.
@Suite struct ChildProcessTests {
    /// The child's `SigBlk` and `SigIgn` lines, spawned from a thread that blocks and ignores
    /// what a libdispatch or Swift concurrency thread would (everything but a few).
    static func signalLines(spawnedFrom prepare: @escaping @Sendable () -> Void) throws -> String {
        let result = SendableBox<Result<String, ChildProcess.SpawnError>>()
        let thread = Thread {
            prepare()
            result.value = Result { () throws(ChildProcess.SpawnError) -> String in
                let (termination, output) = try ChildProcess.capture(["grep", "-E", "^Sig(Blk|Ign):", "/proc/self/status"])
                return termination == .exited(0) ? String(decoding: output, as: UTF8.self) : "exit \(termination.status)"
            }
        }
        thread.start()
        while result.value == nil { usleep(1_000) }
        return try #require(result.value).get()
    }

    @Test("a child spawned from a thread with every signal blocked and SIGPIPE ignored starts with neither")
    func cleanSignals() throws {
        let lines = try Self.signalLines {
            var all = sigset_t()
            sigfillset(&all)
            pthread_sigmask(SIG_SETMASK, &all, nil)
            signal(SIGPIPE, SIG_IGN)  // process-wide; the test process ignores it anyway
        }
        #expect(Self.masks(lines) == [0, 0], "\(lines)")
    }

    /// The `SigBlk` and `SigIgn` masks from `/proc/PID/status` lines, less glibc's own two
    /// signals (32 and 33, its SIGCANCEL and SIGSETXID: no program can use them, and glibc's
    /// posix_spawn leaves them ignored in every child).
    static func masks(_ lines: String) -> [UInt64] {
        lines.split(separator: "\n").map { line in
            (UInt64(line.split(separator: "\t").last ?? "", radix: 16) ?? .max) & ~UInt64(0x1_8000_0000)
        }
    }

    @Test("the child gets only its three descriptors")
    func noInheritedDescriptors() throws {
        let fd = open("/dev/null", O_RDONLY)  // not close-on-exec, on purpose
        defer { close(fd) }
        let (termination, output) = try ChildProcess.capture(["ls", "/proc/self/fd"])
        #expect(termination == .exited(0))
        // ls itself opens one directory descriptor (3) to list the folder.
        #expect(String(decoding: output, as: UTF8.self).split(separator: "\n").sorted() == ["0", "1", "2", "3"])
    }

    @Test("before exec, a descriptor this process opened itself without O_CLOEXEC is marked close-on-exec; one it started with is not")
    func ownDescriptorsCloseOnExec() throws {
        let inherited = ChildProcess.inheritedDescriptors  // as the process started (here: now)
        let own = open("/dev/null", O_RDONLY)  // as a library would: no O_CLOEXEC
        defer { close(own) }
        #expect(own > 2 && fcntl(own, F_GETFD) & FD_CLOEXEC == 0)
        ChildProcess.closeOwnDescriptorsOnExec()
        #expect(fcntl(own, F_GETFD) & FD_CLOEXEC != 0)
        #expect(!inherited.contains(own))
    }

    @Test("a missing program is a typed error with the shell's status")
    func missingProgram() {
        #expect(throws: ChildProcess.SpawnError.self) { try ChildProcess.capture(["/nonexistent/program"]) }
        do {
            _ = try ChildProcess.capture(["/nonexistent/program"])
        } catch {
            #expect(error.shellStatus == 127)
            #expect(error.description.hasPrefix("cannot run /nonexistent/program: "))
        }
    }

    @Test("exit status and signals as a shell shows them")
    func terminations() throws {
        #expect(try ChildProcess.capture(["sh", "-c", "exit 3"]).termination == .exited(3))
        let killed = try ChildProcess.capture(["sh", "-c", "kill -TERM $$"]).termination
        #expect(killed == .signalled(SIGTERM))
        #expect(killed.status == 128 + SIGTERM)
    }
}

/// A value one thread sets and another reads.
final class SendableBox<T: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: T?
    var value: T? {
        get { lock.lock(); defer { lock.unlock() }; return stored }
        set { lock.lock(); stored = newValue; lock.unlock() }
    }
}
