import Dispatch

#if canImport(Glibc)
import Glibc
#endif

/// Opens a URL in the person's browser: `$BROWSER` when set, else `xdg-open`.
///
/// `$BROWSER` follows the old convention: a colon-separated list of commands tried in
/// order; `%s` in a command is replaced by the URL (`%%` is a literal `%`), otherwise the URL
/// is the last argument. Commands are split on spaces and run directly — never through a
/// shell — with standard input, output and error on `/dev/null`, and without
/// `AUTHKIT_CLIENT_SECRET` in their environment. The launcher does not wait for the browser.
public struct BrowserLauncher: Sendable {
    /// What happened when the browser was asked to open the URL.
    public enum Outcome: Sendable, Equatable {
        /// The command started (whether a window appeared is up to it).
        case launched(command: String)
        /// No command could be started; the caller shows the URL for copying.
        case failed(reason: String)
    }

    /// The commands tried, in order (each an argument vector template).
    public let commands: [[String]]

    /// Builds the launcher from `$BROWSER` (when set and not empty) or `xdg-open`.
    public init(environment: [String: String]) {
        if let browser = environment["BROWSER"]?.trimmingASCIIWhitespace(), !browser.isEmpty {
            commands = browser.split(separator: ":").compactMap { entry in
                let words = entry.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
                return words.isEmpty ? nil : words
            }
        } else {
            commands = [["xdg-open"]]
        }
    }

    /// A launcher that tries each command in turn with the URL appended as the last argument.
    public init(commands: [[String]]) {
        self.commands = commands
    }

    /// Tries each command until one starts.
    public func open(_ url: String) -> Outcome {
        var reasons: [String] = []
        for template in commands {
            let argv = Self.arguments(template, url: url)
            guard let program = argv.first else { continue }
            switch Self.spawn(argv) {
            case .success:
                return .launched(command: program)
            case .failure(let reason):
                reasons.append("\(program): \(reason)")
            }
        }
        return .failed(reason: reasons.isEmpty ? "no browser command" : reasons.joined(separator: "; "))
    }

    static func arguments(_ template: [String], url: String) -> [String] {
        var substituted = false
        var argv = template.map { word -> String in
            guard word.contains("%") else { return word }
            var out = ""
            var iterator = word.makeIterator()
            while let character = iterator.next() {
                guard character == "%" else { out.append(character); continue }
                switch iterator.next() {
                case "s": out += url; substituted = true
                case "%": out += "%"
                case let other?: out.append("%"); out.append(other)
                case nil: out.append("%")
                }
            }
            return out
        }
        if !substituted { argv.append(url) }
        return argv
    }

    private enum SpawnResult { case success, failure(String) }

    private static func spawn(_ argv: [String]) -> SpawnResult {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for fd: Int32 in [0, 1, 2] {
            posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0)
        }
        // The browser inherits nothing else of ours (D-Bus connection, sockets, files).
        for fd in Self.openDescriptors() where fd > 2 {
            posix_spawn_file_actions_addclose(&actions, fd)
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // Its own process group: a Ctrl-C meant for authkit does not kill the browser.
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP))
        posix_spawnattr_setpgroup(&attributes, 0)

        let environment = Self.childEnvironment()
        var cArguments = argv.map { strdup($0) } + [nil]
        var cEnvironment = environment.map { strdup($0) } + [nil]
        defer {
            cArguments.forEach { free($0) }
            cEnvironment.forEach { free($0) }
        }
        var pid: pid_t = 0
        var status = posix_spawnp(&pid, argv[0], &actions, &attributes, &cArguments, &cEnvironment)
        // ETXTBSY: the program was just written and another process forked while its file was
        // still open for writing; it clears within moments.
        var attempts = 0
        while status == ETXTBSY && attempts < 50 {
            attempts += 1
            usleep(20_000)
            status = posix_spawnp(&pid, argv[0], &actions, &attributes, &cArguments, &cEnvironment)
        }
        guard status == 0 else { return .failure(String(cString: strerror(status))) }
        // Reap it whenever it ends, so no zombie lingers while the sign-in waits.
        let child = pid
        DispatchQueue.global(qos: .utility).async {
            var exitStatus: Int32 = 0
            while waitpid(child, &exitStatus, 0) < 0 && errno == EINTR {}
        }
        return .success
    }

    /// The descriptors open in this process (from /proc/self/fd).
    private static func openDescriptors() -> [Int32] {
        guard let directory = opendir("/proc/self/fd") else { return [] }
        let own = dirfd(directory)
        var result: [Int32] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if let fd = Int32(name), fd != own { result.append(fd) }
        }
        closedir(directory)
        return result
    }

    /// This process's environment without secrets meant for authkit alone.
    private static func childEnvironment() -> [String] {
        var result: [String] = []
        var pointer = environ
        while let entry = pointer.pointee {
            let text = String(cString: entry)
            if !text.hasPrefix("AUTHKIT_CLIENT_SECRET=") { result.append(text) }
            pointer += 1
        }
        return result
    }
}
