import ChildProcess
import Dispatch

#if canImport(Glibc)
import Glibc
#endif

/// Opens a URL in the person's browser: `$BROWSER` when set, else `xdg-open`.
///
/// `$BROWSER` follows the old convention: a colon-separated list of commands tried in
/// order; `%s` in a command is replaced by the URL (`%%` is a literal `%`), otherwise the URL
/// is the last argument. Commands are split on spaces and run directly — never through a
/// shell — with standard input, output and error on `/dev/null`, a clean signal mask, and without
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

    /// The environment the browser's is made from (`NAME=value` entries; nil: this process's).
    /// Tests give their own instead of changing the environment of a process other tests share.
    package var parentEnvironment: [String]?

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
            switch Self.spawn(argv, environment: Self.childEnvironment(parentEnvironment ?? ChildProcess.currentEnvironment())) {
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

    private static func spawn(_ argv: [String], environment: [String]) -> SpawnResult {
        var options = ChildProcess.Options(argv, environment: environment)
        // Its own process group: a Ctrl-C meant for authkit does not kill the browser.
        options.newProcessGroup = true
        let child: ChildProcess.Spawned
        do throws(ChildProcess.SpawnError) {
            child = try ChildProcess.spawn(options)
        } catch {
            return .failure(String(cString: strerror(error.code)))
        }
        // Reap it whenever it ends, so no zombie lingers while the sign-in waits.
        let pid = child.pid
        DispatchQueue.global(qos: .utility).async { _ = ChildProcess.wait(pid) }
        return .success
    }

    /// The environment without secrets meant for authkit alone.
    private static func childEnvironment(_ parent: [String]) -> [String] {
        parent.filter { !$0.hasPrefix("AUTHKIT_CLIENT_SECRET=") }
    }
}
