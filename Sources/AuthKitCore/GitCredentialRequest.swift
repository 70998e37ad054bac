/// git's credential request (gitcredentials(7), git-credential(1)): `key=value` lines up to a
/// blank line or the end; unknown keys are ignored. Read the same way by `authkit credential
/// git` and the lean client.
package struct GitCredentialRequest: Equatable {
    package var scheme = ""
    package var host = ""
    package var path: String?
    package var username: String?
    package var password: String?
    package var authtype: String?
    package var credential: String?
    package var capabilities: Set<String> = []

    /// A line without `=`: not git's protocol.
    package struct Malformed: Error, Equatable {}

    package init(parsing text: String) throws(Malformed) {
        // (Swift reads CRLF as one character, which a split at "\n" alone would not split at.)
        for line in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }) {
            // (A last line without its newline may still end in a CR.)
            let line = line.hasSuffix("\r") ? line.dropLast() : line
            if line.isEmpty { break }
            guard let equals = line.firstIndex(of: "=") else { throw Malformed() }
            let key = String(line[..<equals]), value = String(line[line.index(after: equals)...])
            switch key {
            case "protocol": scheme = value.lowercased()
            case "host": host = value
            case "path": path = value
            case "username": username = value
            case "password": password = value
            case "authtype": authtype = value
            case "credential": credential = value
            case "capability[]": capabilities.insert(value)
            default: continue  // url, wwwauth[], password_expiry_utc, oauth_refresh_token …
            }
        }
    }

    /// The token git says a server rejected (erase): the password, or a Bearer credential.
    package var rejectedToken: String? {
        if let credential, authtype?.lowercased() == "bearer" { return credential }
        return password
    }

    /// The `get` answer for `token` (expiring at `expiresAt`, Unix seconds): Basic (every git)
    /// or, when git announces the capability, Bearer.
    package func answer(token: String, expiresAt: Int, username: String) -> String {
        if capabilities.contains("authtype") {
            // ephemeral: no helper after this one may store the token (git ≥ 2.46).
            return "capability[]=authtype\nauthtype=Bearer\ncredential=\(token)\nephemeral=1\npassword_expiry_utc=\(expiresAt)\n"
        }
        return "username=\(username)\npassword=\(token)\npassword_expiry_utc=\(expiresAt)\n"
    }

    /// Whether `username` fits on one line of git's protocol: a line break in it would add
    /// lines to the answer.
    package static func isOneLine(_ username: String) -> Bool {
        !username.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F })
    }
}
