/// A group's rules for the agent, from the config file's `[group "NAME"]` section: whether a
/// person is asked before a token is handed out (`confirm = always | once | never`, a `once`
/// yes lasting `confirm_for`), and which programs may ask at all (`allow = git kubectl
/// /usr/bin/curl`).
///
/// A name in `allow` matches only an executable of that name in the system's directories, a
/// path only that file: a program of the user's elsewhere cannot take a listed name. This
/// narrows who gets a token by mistake; it does not stop a process of the same user that wants
/// one (it can run a listed program itself, and chooses its own executable) — see SECURITY.md.
package struct AgentGroupRule: Sendable, Equatable {
    package enum Confirm: String, Sendable, CaseIterable {
        /// Every request asks.
        case always
        /// A yes lasts for the asker's session (its session leader) for ``AgentGroupRule/confirmFor``.
        case once
        /// Nobody is asked (a program not on `allow` is refused).
        case never
    }

    package var confirm: Confirm = .never
    /// Seconds a `once` yes lasts.
    package var confirmFor: Double = 600
    /// The programs that may ask (names or absolute paths); nil: any.
    package var allow: [String]?

    package init(confirm: Confirm = .never, confirmFor: Double = 600, allow: [String]? = nil) {
        self.confirm = confirm
        self.confirmFor = confirmFor
        self.allow = allow
    }

    static let systemDirectories: Set<String> = [
        "/usr/bin", "/bin", "/usr/sbin", "/sbin", "/usr/local/bin", "/usr/lib/git-core", "/usr/libexec/git-core",
    ]

    /// Whether `asker` (or the program authkit runs for it, ``AgentAsker/program``) is on `allow`.
    package func allows(_ asker: AgentAsker) -> Bool {
        guard let allow else { return true }
        let executables = asker.program.map { [$0] } ?? asker.programs.compactMap(\.executable)
        return executables.contains { executable in
            allow.contains { entry in
                if entry.hasPrefix("/") { return executable == entry }
                guard let slash = executable.lastIndex(of: "/") else { return false }
                let directory = String(executable[..<slash]), name = executable[executable.index(after: slash)...]
                return name == entry && Self.systemDirectories.contains(directory)
            }
        }
    }
}
