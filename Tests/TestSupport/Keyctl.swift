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

    /// Removes the kernel keyring store's keyrings of `group` (its items' and its pending items'),
    /// and with them every key they hold. Each test makes a group of its own, and the store keeps
    /// a group's keyring when its last item goes: without this, repeated runs would fill the
    /// user's key quota (200 keys for a user other than root).
    public static func removeGroup(_ group: String) {
        _ = try? ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/keyctl"), removeGroupArguments(group), timeout: 10)
    }

    /// `keyctl`'s arguments for ``removeGroup(_:)``, for a test that runs it as another user.
    public static func removeGroupArguments(_ group: String) -> [String] {
        [
            "session", "-", "/bin/sh", "-c",
            #"p=$(keyctl get_persistent @s) || exit 1; for d in "authkit:$1" "authkit-pending:$1"; do k=$(keyctl search "$p" keyring "$d" 2>/dev/null) && keyctl unlink "$k" "$p" >/dev/null; done; exit 0"#,
            "sh", group,
        ]
    }
}
