#if canImport(Glibc)
import Glibc
#endif

/// The user's home folder, as every file of authkit's finds it (the config file, the state
/// file, the locks, the file stores): `HOME` when it is an absolute path, else the password
/// database's entry of this user. A relative `HOME` (`HOME=.`) would be the folder authkit
/// runs in — the repository git runs a helper in.
package enum UserHome {
    /// The folder, or "" when neither names one.
    package static func path(home: String?) -> String {
        if let home, home.hasPrefix("/") { return home }
        guard let entry = getpwuid(geteuid()), let directory = entry.pointee.pw_dir else { return "" }
        let path = String(cString: directory)
        return path.hasPrefix("/") ? path : ""
    }
}
