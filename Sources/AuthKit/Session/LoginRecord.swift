/// The issuer and client id of each group's last sign-in — what `authkit login` needs besides
/// the group, and no secret — so that a later command's "nobody is signed in" hint names the
/// whole login command even after `logout` removed the sign-in itself.
///
/// One line per group, `<group> <issuer> <client id>`, in `$XDG_STATE_HOME/authkit/logins`
/// (else `~/.local/state/authkit/logins`): a ``GroupStateFile``, trusted only as that is.
/// Written whenever a sign-in is saved, kept after sign-out. An issuer or client id with a
/// space or a control character in it is not recorded (the hint then names what it can).
package enum LoginRecord {
    /// What a group's last sign-in was made with.
    package struct Entry: Equatable, Sendable {
        package var issuer: String
        package var clientID: String
    }

    /// The last sign-in of `group`, or nil (none recorded, or the file cannot be trusted).
    package static func entry(for group: String, environment: [String: String]) -> Entry? {
        guard let line = GroupStateFile.lines(path(environment: environment))[group] else { return nil }
        let fields = line.split(separator: " ", omittingEmptySubsequences: false)
        guard fields.count == 2, fields.allSatisfy({ !$0.isEmpty }) else { return nil }
        return Entry(issuer: String(fields[0]), clientID: String(fields[1]))
    }

    /// Records `entry` as `group`'s last sign-in. Failing to record is not failing the
    /// sign-in: the caller logs it.
    static func record(_ entry: Entry, for group: String, environment: [String: String]) throws(GroupStateFile.Failure) {
        let fields = [entry.issuer, entry.clientID]
        guard fields.allSatisfy({ !$0.isEmpty && !$0.unicodeScalars.contains { $0.value <= 0x20 || $0.value == 0x7F } }) else { return }
        try GroupStateFile.update(path(environment: environment), group: group) { _ in fields.joined(separator: " ") }
    }

    /// Every group a sign-in was recorded for (kept after sign-outs), sorted.
    package static func groups(environment: [String: String]) -> [String] {
        GroupStateFile.lines(path(environment: environment)).keys.sorted()
    }

    static func path(environment: [String: String]) -> String {
        GroupStateFile.path("logins", environment: environment)
    }
}
