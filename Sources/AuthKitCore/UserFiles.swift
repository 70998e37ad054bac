/// Where authkit's own files are for an environment: the configuration file and the state
/// folder's files. `home` is the user's home folder, asked for only when the environment names
/// neither (`UserHome` in authkit; the lean client hands off when `HOME` is not absolute).
package enum UserFiles {
    /// `$AUTHKIT_CONFIG`, else `$XDG_CONFIG_HOME/authkit/config` (an absolute one), else
    /// `~/.config/authkit/config`.
    package static func configPath(environment: [String: String], home: () -> String) -> String {
        if let explicit = environment["AUTHKIT_CONFIG"], !explicit.isEmpty { return explicit }
        if let config = environment["XDG_CONFIG_HOME"], config.hasPrefix("/") { return config + "/authkit/config" }
        return home() + "/.config/authkit/config"
    }

    /// The file called `name` in `$XDG_STATE_HOME/authkit/` (an absolute one), else in
    /// `~/.local/state/authkit/`.
    package static func statePath(_ name: String, environment: [String: String], home: () -> String) -> String {
        if let state = environment["XDG_STATE_HOME"], state.hasPrefix("/") { return state + "/authkit/" + name }
        return home() + "/.local/state/authkit/" + name
    }
}
