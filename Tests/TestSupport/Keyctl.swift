import Foundation

/// `keyctl(1)` as a process of the user that possesses the persistent keyring — it asks the kernel
/// for it in a session keyring of its own, which links the user keyring as a login session's
/// does — so that it may read and change authkit's keys, which are their possessor's only.
/// `%persistent` in an argument is replaced by the persistent keyring's id.
public enum Keyctl {
    public static func run(_ arguments: [String], timeout: TimeInterval = 10) throws -> ProcessResult {
        try ProcessRunner.run(
            URL(fileURLWithPath: "/usr/bin/keyctl"),
            [
                "session", "-", "/bin/sh", "-c",
                #"p=$(keyctl get_persistent @s) && keyctl link @u @s && for a; do shift; set -- "$@" "$(printf %s "$a" | sed "s/%persistent/$p/g")"; done; exec keyctl "$@""#,
                "sh",
            ] + arguments,
            timeout: timeout)
    }
}
