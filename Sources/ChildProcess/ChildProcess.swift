import CChildProcess

#if canImport(Glibc)
import Glibc
#endif

/// The one way this package starts another program (`posix_spawn`, never `fork` from Swift and
/// never Foundation's `Process`, whose pipe readers are dispatch sources).
///
/// Every child starts clean whatever thread spawns it: an empty signal mask and every
/// signal's disposition at its default (a Swift concurrency or libdispatch thread blocks
/// most signals, and a blocked mask is inherited across `exec`), no descriptor of ours but
/// the three it is given, and — when asked — a process group of its own.
package enum ChildProcess {
    /// Where one of the child's standard descriptors comes from or goes to.
    package enum Stream: Sendable, Equatable {
        /// `/dev/null`.
        case null
        /// This process's own descriptor of the same number.
        case inherit
        /// A new pipe; the parent's end is in ``Spawned``.
        case pipe
        /// An open descriptor of this process (a log file, say); it stays open here.
        case descriptor(Int32)
    }

    /// Why a program could not be started.
    package struct SpawnError: Error, Sendable, CustomStringConvertible {
        package var program: String
        package var code: Int32
        package var description: String { "cannot run \(program): \(String(cString: strerror(code)))" }
        /// Exit status a shell would report (127 not found, 126 not executable).
        package var shellStatus: Int32 { code == ENOENT ? 127 : 126 }
    }

    /// What a child's end was.
    package enum Termination: Sendable, Equatable {
        case exited(Int32)
        case signalled(Int32)

        /// The status a shell shows: the exit code, or 128 + the signal.
        package var status: Int32 {
            switch self {
            case .exited(let code): return code
            case .signalled(let signal): return 128 + signal
            }
        }

        init(waitStatus: Int32) {
            let signal = waitStatus & 0x7F
            self = signal == 0 ? .exited((waitStatus >> 8) & 0xFF) : .signalled(signal)
        }
    }

    /// What to start and how.
    package struct Options: Sendable {
        /// The program (looked up on `PATH` when it has no slash) and its arguments.
        package var arguments: [String]
        /// The whole environment as `NAME=value`; nil keeps this process's.
        package var environment: [String]?
        /// The working directory; nil keeps this process's.
        package var directory: String?
        package var stdin: Stream = .null
        package var stdout: Stream = .null
        package var stderr: Stream = .null
        /// A process group of its own (its pid), so that a Ctrl-C meant for us does not reach
        /// it, and so that the whole group can be signalled at once.
        package var newProcessGroup = false

        package init(_ arguments: [String], environment: [String]? = nil) {
            self.arguments = arguments
            self.environment = environment
        }
    }

    /// A started child: its pid and the parent's ends of the pipes asked for. The caller owns
    /// the descriptors and must reap the child (``wait(_:)``).
    package struct Spawned: Sendable {
        package var pid: pid_t
        package var stdin: Int32?
        package var stdout: Int32?
        package var stderr: Int32?
    }

    /// Starts a child as `options` say.
    package static func spawn(_ options: Options) throws(SpawnError) -> Spawned {
        guard let program = options.arguments.first, !program.isEmpty else {
            throw SpawnError(program: "", code: ENOENT)
        }
        var parentEnds: [Int32?] = [nil, nil, nil]
        var childEnds: [Int32] = []
        func closeAll() {
            for fd in parentEnds.compactMap({ $0 }) + childEnds { close(fd) }
        }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (number, stream) in [options.stdin, options.stdout, options.stderr].enumerated() {
            let fd = Int32(number)
            switch stream {
            case .null:
                posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0)
            case .inherit:
                break
            case .descriptor(let source):
                posix_spawn_file_actions_adddup2(&actions, source, fd)
            case .pipe:
                var ends: [Int32] = [-1, -1]
                guard ak_pipe_cloexec(&ends) == 0 else {
                    let code = errno
                    closeAll()
                    throw SpawnError(program: program, code: code)
                }
                // The child reads stdin's read end and writes the others' write end.
                let (childEnd, parentEnd) = fd == 0 ? (ends[0], ends[1]) : (ends[1], ends[0])
                parentEnds[number] = parentEnd
                childEnds.append(childEnd)
                posix_spawn_file_actions_adddup2(&actions, childEnd, fd)
            }
        }
        // Nothing else of ours reaches the child (D-Bus connections, sockets, other pipes).
        ak_spawn_closefrom(&actions, 3)
        if let directory = options.directory { ak_spawn_chdir(&actions, directory) }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var flags = Int32(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF)
        if options.newProcessGroup {
            flags |= Int32(POSIX_SPAWN_SETPGROUP)
            posix_spawnattr_setpgroup(&attributes, 0)
        }
        posix_spawnattr_setflags(&attributes, Int16(flags))
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)
        var everything = sigset_t()
        sigfillset(&everything)
        posix_spawnattr_setsigdefault(&attributes, &everything)

        let argv = options.arguments.map { strdup($0) } + [nil]
        let envp = (options.environment ?? currentEnvironment()).map { strdup($0) } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var pid: pid_t = 0
        var status = posix_spawnp(&pid, program, &actions, &attributes, argv, envp)
        // ETXTBSY: the program was just written and another thread's child still holds it open
        // for writing for a moment.
        var attempts = 0
        while status == ETXTBSY && attempts < 50 {
            attempts += 1
            usleep(20_000)
            status = posix_spawnp(&pid, program, &actions, &attributes, argv, envp)
        }
        for fd in childEnds { close(fd) }
        childEnds = []
        guard status == 0 else {
            closeAll()
            throw SpawnError(program: program, code: status)
        }
        return Spawned(pid: pid, stdin: parentEnds[0], stdout: parentEnds[1], stderr: parentEnds[2])
    }

    /// Waits for `pid` to end (retrying on EINTR) and reaps it.
    package static func wait(_ pid: pid_t) -> Termination {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            if errno != EINTR { return .exited(-1) }
        }
        return Termination(waitStatus: status)
    }

    /// Reaps `pid` if it has ended; nil while it runs.
    package static func poll(_ pid: pid_t) -> Termination? {
        var status: Int32 = 0
        let result = waitpid(pid, &status, WNOHANG)
        if result == 0 { return nil }
        if result < 0 { return errno == EINTR ? nil : .exited(-1) }
        return Termination(waitStatus: status)
    }

    /// Runs a program with no input and standard error discarded, and returns how it ended
    /// and (at most `limit` bytes of) its standard output.
    package static func capture(
        _ arguments: [String], environment: [String]? = nil, limit: Int = 4 << 20
    ) throws(SpawnError) -> (termination: Termination, output: [UInt8]) {
        var options = Options(arguments, environment: environment)
        options.stdout = .pipe
        let child = try spawn(options)
        var output: [UInt8] = []
        if let fd = child.stdout {
            output = readAll(fd, limit: limit)
            close(fd)
        }
        return (wait(child.pid), output)
    }

    /// Reads `fd` to its end (or `limit` bytes, then drains the rest unread).
    package static func readAll(_ fd: Int32, limit: Int) -> [UInt8] {
        var result: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { break }
            if result.count < limit { result += buffer[0..<min(count, limit - result.count)] }
        }
        return result
    }

    /// Replaces this process with `arguments`, the program at `path` (already found on `PATH`:
    /// a name without `/` is not found), with this process's environment as it is (bytes, not
    /// text) but for the variables named in `dropping`, and with `adding` (`NAME=value` each):
    /// passed to `execve`, never set in this process, whose other threads may read its own.
    /// First the signal mask and dispositions go back to what a freshly started program
    /// expects: `exec` keeps the calling thread's blocked signals and every ignored signal.
    /// Returns only on failure, with the `errno` of `execve` (`ENOENT` for a program not found).
    package static func replaceProcess(with arguments: [String], path: String, dropping: [String], adding: [String]) -> Int32 {
        guard !arguments.isEmpty, path.contains("/") else { return ENOENT }
        resetSignals()
        closeOwnDescriptorsOnExec()
        let argv = arguments.map { strdup($0) } + [nil]
        let added = adding.map { strdup($0) }
        let envp = environment(dropping: dropping) + added + [nil]
        execve(path, argv, envp)
        let code = errno
        for pointer in argv + added { free(pointer) }
        return code
    }

    /// This process's environment entries (their own memory) but those of the variables
    /// `dropped` names.
    static func environment(dropping dropped: [String]) -> [UnsafeMutablePointer<CChar>?] {
        let prefixes = dropped.map { Array(($0 + "=").utf8) }
        var result: [UnsafeMutablePointer<CChar>?] = []
        var entry = environ
        while let pointer = entry.pointee {
            let named = prefixes.contains { prefix in
                var index = 0
                while index < prefix.count, UInt8(bitPattern: pointer[index]) == prefix[index] { index += 1 }
                return index == prefix.count
            }
            if !named { result.append(pointer) }
            entry += 1
        }
        return result
    }

    /// The descriptors above standard error this process was started with: its parent's, to
    /// pass on through ``replaceProcess(with:path:dropping:adding:)``. Read once, as the process starts
    /// (`authkit` touches it first thing), before anything of its own is open.
    package static let inheritedDescriptors: Set<Int32> = openDescriptors()

    /// Every descriptor above standard error this process opened itself is closed at `exec`,
    /// whoever opened it without `O_CLOEXEC` (a library: tpm2-tss's `/dev/tpmrm0`).
    static func closeOwnDescriptorsOnExec() {
        for descriptor in openDescriptors() where !inheritedDescriptors.contains(descriptor) {
            let flags = fcntl(descriptor, F_GETFD)
            if flags >= 0 { _ = fcntl(descriptor, F_SETFD, flags | FD_CLOEXEC) }
        }
    }

    /// The open descriptors above 2, from `/proc/self/fd` (without the one reading it).
    static func openDescriptors() -> Set<Int32> {
        guard let directory = opendir("/proc/self/fd") else { return [] }
        defer { closedir(directory) }
        let own = dirfd(directory)
        var result: Set<Int32> = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if let descriptor = Int32(name), descriptor > 2, descriptor != own { result.insert(descriptor) }
        }
        return result
    }

    /// Every catchable signal back to its default disposition and none blocked, on this thread.
    package static func resetSignals() {
        for signal in 1..<Int32(ak_sigrtmax() + 1) where signal != SIGKILL && signal != SIGSTOP {
            Glibc.signal(signal, SIG_DFL)
        }
        ak_unignore_reserved_signals()
        var empty = sigset_t()
        sigemptyset(&empty)
        pthread_sigmask(SIG_SETMASK, &empty, nil)
    }

    /// This process's environment, `NAME=value` each.
    package static func currentEnvironment() -> [String] {
        var result: [String] = []
        var pointer = environ
        while let entry = pointer.pointee {
            result.append(String(cString: entry))
            pointer += 1
        }
        return result
    }
}
