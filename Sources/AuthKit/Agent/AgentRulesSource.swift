import AuthKitCore
import Logging

#if canImport(Glibc)
import Glibc
#endif

/// The groups' rules as the config file says them, read again when the file changes (checked
/// at most once a second), so a changed `[group "NAME"]` section applies without restarting the
/// agent. A file that cannot be used keeps the rules last read, and says so once; one that
/// cannot be used before any was read leaves the rules unknown, and the agent serves nothing
/// until it can read them (its forwards and sandboxes ask without this machine's file, and
/// `confirm = always` is for them).
struct AgentRulesSource {
    /// What changed since the last look.
    enum Update: Equatable {
        /// The rules (none when there is no file).
        case rules([String: AgentGroupRule])
        /// A file that cannot be used, and no rules read before it.
        case unusable
    }

    private let environment: [String: String]
    private var checkedAt: ContinuousClock.Instant?
    private var stamp: [Int] = []
    private var warned = false
    private var read = false
    /// The last read failed: read again at every look, whatever the file's stamp — a
    /// `chmod go-w` or a fixed folder above it changes none of it.
    private var failing = false

    init(environment: [String: String]) {
        self.environment = environment
    }

    /// The new rules when the file changed since the last look, else nil.
    mutating func reloadIfChanged(logger: Logger) -> Update? {
        let now = ContinuousClock.now
        if let checkedAt, now - checkedAt < .seconds(1) { return nil }
        checkedAt = now
        var info = stat()
        let found = stat(ConfigFile.location(environment: environment), &info) == 0
        // Only a file that is not there is no file: one that cannot be looked at (a folder
        // without search permission) is one that cannot be used.
        let absent = !found && errno == ENOENT && environment["AUTHKIT_CONFIG"].map(\.isEmpty) != false
        let current = found ? [Int(info.st_ino), Int(info.st_size), info.st_mtim.tv_sec, info.st_mtim.tv_nsec] : []
        guard current != stamp || failing else { return nil }
        stamp = current
        if absent {
            (read, failing, warned) = (true, false, false)
            return .rules([:])
        }
        do throws(ConfigurationError) {
            let rules = try ConfigFile.load(environment: environment).agentRules()
            (warned, read, failing) = (false, true, false)
            return .rules(rules)
        } catch {
            failing = true
            if !warned, !read {
                logger.error(
                    "the config file cannot be used and no groups' rules were read before it: no token is served until it can be",
                    metadata: ["reason": "\(error)"])
            } else if !warned {
                logger.warning("the config file cannot be used; the groups' rules stay as they were", metadata: ["reason": "\(error)"])
            }
            warned = true
            return read ? nil : .unusable
        }
    }
}
