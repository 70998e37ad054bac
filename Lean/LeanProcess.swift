import AuthKitCore
import CLibc

/// The lean client's few dealings with its process: the environment, files, the clock,
/// standard output, and handing the command to `authkit`.
enum LeanProcess {
    /// `environ` as a dictionary, or nil when a name appears twice (which of the two authkit
    /// would take is not the lean client's to guess: it hands such a command over).
    static func environment() -> [String: String]? {
        var variables: [String: String] = [:]
        guard var entry = environ else { return variables }
        while let pointer = entry.pointee {
            let text = String(cString: pointer)
            if let equals = text.utf8.firstIndex(of: UInt8(ascii: "=")) {
                // Where a byte `=` is not a character `=` of its own (a combining mark after
                // it), a reader by characters splits elsewhere: not the lean client's to guess.
                guard text.firstIndex(of: "=") == equals else { return nil }
                let name = String(text[..<equals])
                guard variables[name] == nil else { return nil }
                variables[name] = String(text[text.utf8.index(after: equals)...])
            }
            entry += 1
        }
        return variables
    }

    /// Seconds from now until `time` (Unix seconds).
    static func secondsUntil(_ time: Double) -> Double {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return time - (Double(now.tv_sec) + Double(now.tv_nsec) / 1e9)
    }

    /// `bytes` to `fd` (standard output), short writes retried; false when not all went.
    @discardableResult
    static func write(_ bytes: [UInt8], to fd: Int32 = 1) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { raw in CLibc.write(fd, raw.baseAddress! + offset, raw.count - offset) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { return false }
            offset += written
        }
        return true
    }

    /// SIGPIPE's disposition as this process was given it, kept before libsecret is loaded:
    /// GLib ignores SIGPIPE for its sockets, and an ignored signal stays ignored across
    /// `execv`, so ``handOff(_:refusal:input:)`` puts it back for authkit.
    nonisolated(unsafe) private static var givenSIGPIPE: sigaction?

    /// Keeps the signal dispositions this process was given (SIGPIPE's), once.
    static func keepSignalDispositions() {
        guard givenSIGPIPE == nil else { return }
        var action = sigaction()
        if sigaction(SIGPIPE, nil, &action) == 0 { givenSIGPIPE = action }
    }

    /// Runs the full `authkit` beside this program with this process's arguments (and a
    /// refusal the agent already gave, so that authkit explains it without asking again; tied
    /// to this process's id, which `execv` keeps, so that no other process takes it).
    /// `input`: what the lean client read of standard input, which authkit then reads in its
    /// place.
    static func handOff(_ vector: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>, refusal: [UInt8]? = nil, input: [UInt8]? = nil)
        -> Never
    {
        if var given = givenSIGPIPE { sigaction(SIGPIPE, &given, nil) }
        // (Passed to execve, never set here, where libsecret's threads may read the environment.)
        var added: [String] = []
        if greeted { added.append(LeanTokenPlan.greetedVariable + "=\(getpid())") }
        if let refusal { added.append(refusalVariable + "=\(getpid()) " + String(decoding: refusal, as: UTF8.self)) }
        let envp = environment(dropping: [LeanTokenPlan.greetedVariable] + (refusal == nil ? [] : [refusalVariable]), adding: added)
        if let input { replaceStandardInput(input) }
        // The folder from the kernel's link to this program, as bytes: never PATH, and a
        // folder name that is not UTF-8 stays what it is.
        var own = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink("/proc/self/exe", &own, own.count - 1)
        guard length > 0, length < own.count - 1, let slash = own[..<length].lastIndex(of: CChar(bitPattern: UInt8(ascii: "/"))) else {
            fail("cannot find where this program is (/proc/self/exe)")
        }
        var full = Array(own[...slash]) + "authkit".utf8.map { CChar(bitPattern: $0) } + [0]
        let shown = String(decoding: full.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
        // Never this program again (a link to it named authkit would start it forever).
        var this = stat()
        var that = stat()
        guard stat("/proc/self/exe", &this) == 0 else { fail("cannot find where this program is (/proc/self/exe)") }
        if stat(&full, &that) == 0, that.st_dev == this.st_dev, that.st_ino == this.st_ino {
            fail("cannot run authkit at \(shown): it is this program")
        }
        closeOwnDescriptorsOnExec()
        execve(&full, vector, envp)
        fail("cannot run authkit at \(shown): \(String(cString: strerror(errno)))")
    }

    /// One line of standard input, read a byte at a time (what follows it stays unread), with
    /// its newline and whether one `ended` it; at most `limit` bytes before the newline (one
    /// more shows the line longer). A read that fails ends it as the end of input would. nil
    /// when standard input is a terminal: a plug-in never reads one.
    static func readLine(limit: Int) -> (bytes: [UInt8], ended: Bool)? {
        guard isatty(0) != 1 else { return nil }
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        while bytes.count <= limit {
            let count = read(0, &byte, 1)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return (bytes, false) }
            bytes.append(byte)
            if byte == 0x0A { return (bytes, true) }
        }
        return (bytes, false)
    }

    /// Whether this process greeted its client (``greet(_:)``): authkit, handed the command, then
    /// does not greet again (`LeanTokenPlan.greetedVariable`).
    nonisolated(unsafe) private static var greeted = false

    /// A plug-in's hello to its client (cargo's), said before its request is read.
    static func greet(_ bytes: [UInt8]) {
        write(bytes)
        greeted = true
    }

    /// Standard input, whole, at most `limit` + 1 bytes (more is too much for any reader of
    /// it), and the error that ended it early (errno), if one did. nil when it is a terminal:
    /// a plug-in never reads one.
    static func readStandardInput(limit: Int) -> (bytes: [UInt8], error: Int32?)? {
        guard isatty(0) != 1 else { return nil }
        return FileAccess.readAll(descriptor: 0, limit: limit)
    }

    /// Standard input replaced by `bytes`, what was read of it, so that the program it is
    /// handed to reads the same request: a pipe holding them, as a client's request comes
    /// (a file in memory when the pipe cannot take them all at once). Left as it is when
    /// nothing was read.
    private static func replaceStandardInput(_ bytes: [UInt8]) {
        guard !bytes.isEmpty else { return }
        var ends: [Int32] = [-1, -1]
        if pipe(&ends) == 0 {
            // (A pipe holds 64 KiB; the longest request a reader takes is one byte more.)
            if bytes.count > 4096 { _ = ak_set_pipe_size(ends[1], Int32(2 * CredentialInput.maximumBytes)) }
            if ak_set_nonblocking(ends[1]) == 0, write(bytes, to: ends[1]) {
                close(ends[1])
                take(ends[0])
                return
            }
            close(ends[0])
            close(ends[1])
        }
        let fd = ak_memfd_create("authkit-request")
        guard fd >= 0, write(bytes, to: fd), lseek(fd, 0, SEEK_SET) == 0 else {
            fail("cannot hand the request to authkit: \(String(cString: strerror(errno)))")
        }
        take(fd)
    }

    /// `fd` as standard input (without close-on-exec, which `dup2` clears).
    private static func take(_ fd: Int32) {
        guard fd != 0 else { return }
        guard dup2(fd, 0) == 0 else { fail("cannot hand the request to authkit: \(String(cString: strerror(errno)))") }
        close(fd)
    }

    /// authkit's own words for standard input it could not read (`CredentialPlugin.readInput`),
    /// when the lean client read part of the request before the error: authkit, reading the
    /// rest, could not tell.
    static func unreadableInput(_ code: Int32) -> Never {
        let line = Array("authkit: cannot read standard input: \(String(cString: strerror(code)))\n".utf8)
        _ = line.withUnsafeBytes { CLibc.write(2, $0.baseAddress, $0.count) }
        exit(2)
    }

    /// The descriptors above standard error this process was started with (its parent's, which
    /// `exec` passes on), kept by ``keepInheritedDescriptors()``.
    nonisolated(unsafe) private static var inherited: Set<Int32> = []

    nonisolated(unsafe) private static var keptInherited = false

    /// Keeps the descriptors open now, before the process opens any of its own.
    static func keepInheritedDescriptors() {
        inherited = openDescriptors()
        keptInherited = true
    }

    /// The open descriptors above 2, from `/proc/self/fd` (without the one reading it).
    private static func openDescriptors() -> Set<Int32> {
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

    /// `command` run in this process's place as authkit's `exec` runs it
    /// (`ChildProcess.replaceProcess`): the program at `path` (a name without `/` was not found
    /// on `PATH`), this process's environment with `token` in `variable` (passed to `execve`,
    /// never set here, where libsecret's threads may read the environment), every signal at its
    /// default disposition and none blocked, the descriptors this process opened closed. When it
    /// cannot run, authkit's words and exit code.
    static func replaceProcess(with command: [String], path: String?, variable: String, token: String) -> Never {
        var code = ENOENT
        if let path, path.contains("/") {
            for signal in 1..<Int32(ak_sigrtmax() + 1) where signal != SIGKILL && signal != SIGSTOP {
                ak_default_signal(signal)
            }
            ak_unignore_reserved_signals()
            var empty = sigset_t()
            sigemptyset(&empty)
            pthread_sigmask(SIG_SETMASK, &empty, nil)
            closeOwnDescriptorsOnExec()
            let argv = command.map { strdup($0) } + [nil]
            execve(path, argv, environment(dropping: ExecRules.handedOverVariables + [variable], adding: [variable + "=" + token]))
            code = errno
        }
        let line = Array("authkit: cannot run \(command[0]): \(String(cString: strerror(code)))\n".utf8)
        _ = line.withUnsafeBytes { CLibc.write(2, $0.baseAddress, $0.count) }
        _exit(code == ENOENT ? 127 : 126)
    }

    /// This process's environment as `execve` takes it: its entries as they are (bytes, not
    /// text) but those of the variables `dropped` names, then `added` (`NAME=value` each).
    private static func environment(dropping dropped: [String], adding added: [String]) -> [UnsafeMutablePointer<CChar>?] {
        let prefixes = dropped.map { Array(($0 + "=").utf8) }
        var result: [UnsafeMutablePointer<CChar>?] = []
        if var entry = environ {
            while let pointer = entry.pointee {
                let named = prefixes.contains { prefix in
                    var index = 0
                    while index < prefix.count, UInt8(bitPattern: pointer[index]) == prefix[index] { index += 1 }
                    return index == prefix.count
                }
                if !named { result.append(pointer) }
                entry += 1
            }
        }
        return result + added.map { strdup($0) } + [nil]
    }

    /// Every descriptor above standard error this process opened itself is closed at `exec`
    /// (when ``keepInheritedDescriptors()`` kept the parent's: `exec`, handed over or not).
    private static func closeOwnDescriptorsOnExec() {
        guard keptInherited else { return }
        for descriptor in openDescriptors() where !inherited.contains(descriptor) {
            _ = ak_set_cloexec(descriptor)
        }
    }

    /// The variable a refusal is handed over in (`authkit help environment`): `PID LINE`.
    static let refusalVariable = "AUTHKIT_AGENT_ANSWER"

    private static func fail(_ message: String) -> Never {
        let line = Array("authkit: \(message)\n".utf8)
        _ = line.withUnsafeBytes { CLibc.write(2, $0.baseAddress, $0.count) }
        exit(2)
    }
}
