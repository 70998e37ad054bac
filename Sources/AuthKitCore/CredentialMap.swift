/// Finds the ``CredentialTarget`` for a git URL or a docker registry in a config file.
package enum CredentialMap {
    /// The entry for git's request (`protocol`, `host` with an optional port, `path` when git
    /// sends it, i.e. with `credential.useHttpPath`, and `username` when it knows one), chosen
    /// as git chooses among `credential.<url>.*` settings: both paths normalised as git
    /// normalises URLs (unreserved characters percent-decoded, dot segments removed), same
    /// scheme, same host and port, a path the entry's path is a prefix of (by whole segments),
    /// and a user name in the entry that is git's `username=` when git sends one. The most specific entry
    /// wins (longer path, then a named user); two equally specific entries are refused as
    /// ambiguous, never chosen at random. Nil when no entry matches, or when git's path has a
    /// dot segment.
    package static func gitTarget(
        protocol scheme: String, host: String, path: String?, username: String? = nil, in file: ConfigFile
    ) throws(ConfigProblem) -> CredentialTarget? {
        // git sends `path` already percent-decoded (credential_from_url), so `a/../b` may have
        // been `a/%2e%2e/b` (b to the server) or `a/..%2Fb` (under a to the server, which gets
        // the `%2F` as sent): a path with dot segments gets no token. It is not decoded again
        // either, which would turn a literal `%2e%2e` into `..`.
        let segments = (path ?? "").split(separator: "/", omittingEmptySubsequences: false)
        // (normalizedPath refuses a path that hides a delimiter, which the split would not see.)
        guard !segments.contains(where: { $0 == "." || $0 == ".." }), let wantedPath = normalizedPath(path ?? "", decoding: false)
        else { return nil }
        return try target(scheme: scheme, host: host, path: wantedPath, username: username, in: file)
    }

    /// The entry for a URL exactly as a client sends and fetches it (cargo's index URL),
    /// chosen as for git. Its path is compared as sent, escapes and all, normalised as an
    /// entry's path is: an escaped `/` (`%2F`) stays inside its segment, as the server gets
    /// it, so `…/team-b%2F..%2Fteam-a/` is never `…/team-a/`. Nil when no entry matches, or
    /// when the URL cannot be read or climbs above the root.
    package static func urlTarget(_ url: String, in file: ConfigFile) throws(ConfigProblem) -> CredentialTarget? {
        guard let wanted = ParsedURL(url) else { return nil }
        return try target(scheme: wanted.scheme, host: wanted.host, path: wanted.path, username: wanted.user, in: file)
    }

    /// The most specific `[credential]` entry for a request already taken apart (see
    /// ``gitTarget(protocol:host:path:username:in:)``).
    private static func target(
        scheme: String, host: String, path wantedPath: [String], username: String?, in file: ConfigFile
    ) throws(ConfigProblem) -> CredentialTarget? {
        let wantedHost = host.lowercased()
        var best: [(url: String, entry: ParsedURL, section: ConfigFile.Section)] = []
        func specificity(_ entry: ParsedURL) -> (Int, Int) { (entry.path.count, entry.user == nil ? 0 : 1) }
        for (url, section) in file.credentials {
            guard let entry = ParsedURL(url) else { continue }
            guard entry.scheme == scheme.lowercased(), entry.host == wantedHost else { continue }
            guard entry.path.count <= wantedPath.count, Array(wantedPath.prefix(entry.path.count)) == entry.path else { continue }
            // git sent a user name: an entry for another user is not for this request. It sent
            // none: an entry with a user still matches, and two of them are ambiguous.
            if let user = entry.user, let username, user != username { continue }
            if let first = best.first {
                if specificity(entry) < specificity(first.entry) { continue }
                if specificity(entry) > specificity(first.entry) { best = [] }
            }
            best.append((url, entry, section))
        }
        guard let chosen = best.first else { return nil }
        guard best.count == 1 else {
            let lines = best.map { "line \($0.section.line) [credential \"\($0.url)\"]" }.sorted().joined(separator: ", ")
            throw ConfigProblem(
                location: file.path,
                problem: "\(lines) match \(scheme)://\(host) equally; give each a different path, or a user name "
                    + "(https://USER@host) that git sends as username=")
        }
        return CredentialTarget(entry: chosen.url, section: chosen.section)
    }

    /// A URL path as git compares it (`url_normalize`): split into segments — each, when
    /// `decoding` (a URL as written in the config file), with its unreserved characters
    /// percent-decoded and other escapes in upper case — then `.` and `..` segments removed.
    /// Nil when the path is not valid (a bad escape, `..` above the root).
    static func normalizedPath(_ path: String, decoding: Bool = true) -> [String]? {
        guard !hidesDelimiter(path) else { return nil }
        var segments: [String] = []
        for raw in path.split(separator: "/", omittingEmptySubsequences: true) {
            guard let segment = decoding ? decodeUnreserved(raw) : String(raw) else { return nil }
            switch segment {
            case ".": continue
            case "..":
                guard !segments.isEmpty else { return nil }
                segments.removeLast()
            default: segments.append(segment)
            }
        }
        return segments
    }

    /// `text` with every `%XX` decoded (a user name); nil for a bad escape.
    package static func percentDecoded(_ text: Substring) -> String? {
        var out: [UInt8] = []
        var bytes = Array(text.utf8)[...]
        while let byte = bytes.popFirst() {
            guard byte == UInt8(ascii: "%") else { out.append(byte); continue }
            guard bytes.count >= 2, let value = UInt8(String(decoding: bytes.prefix(2), as: UTF8.self), radix: 16) else { return nil }
            bytes = bytes.dropFirst(2)
            out.append(value)
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static func decodeUnreserved(_ text: Substring) -> String? {
        var out: [UInt8] = []
        var bytes = Array(text.utf8)[...]
        func hex(_ byte: UInt8) -> UInt8? {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
            default: return nil
            }
        }
        while let byte = bytes.popFirst() {
            guard byte == UInt8(ascii: "%") else { out.append(byte); continue }
            guard let high = bytes.popFirst().flatMap(hex), let low = bytes.popFirst().flatMap(hex) else { return nil }
            let decoded = high << 4 | low
            let unreserved =
                (0x41...0x5A).contains(decoded) || (0x61...0x7A).contains(decoded) || (0x30...0x39).contains(decoded)
                || decoded == UInt8(ascii: "-") || decoded == UInt8(ascii: ".") || decoded == UInt8(ascii: "_")
                || decoded == UInt8(ascii: "~")
            if unreserved {
                out.append(decoded)
            } else {
                let digits = String(decoded, radix: 16, uppercase: true)
                out += Array(("%" + (digits.count == 1 ? "0" : "") + digits).utf8)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The entry for a docker registry as the docker CLI names it (`registry.example.com`,
    /// `localhost:5000`, `https://index.docker.io/v1/`): compared by host and port, ignoring
    /// scheme, path and case. Nil when no entry matches.
    package static func registryTarget(server: String, in file: ConfigFile) -> CredentialTarget? {
        let wanted = registryHost(server)
        guard !wanted.isEmpty else { return nil }
        for (name, section) in file.registries.sorted(by: { $0.key < $1.key }) where registryHost(name) == wanted {
            return CredentialTarget(entry: name, section: section)
        }
        return nil
    }

    /// The other entries of `kind` that name what `name` names — the same scheme, host,
    /// normalised path and user; the same registry host — so that adding `name` beside them
    /// would make a request ambiguous.
    package static func equivalents(of name: String, kind: ConfigFile.MappingKind, in file: ConfigFile) -> [String] {
        switch kind {
        case .credential:
            guard let wanted = ParsedURL(name) else { return [] }
            return file.credentials.keys.filter { other in
                guard other != name, let entry = ParsedURL(other) else { return false }
                return (entry.scheme, entry.host, entry.path, entry.user) == (wanted.scheme, wanted.host, wanted.path, wanted.user)
            }.sorted()
        case .registry:
            let wanted = registryHost(name)
            return file.registries.keys.filter { $0 != name && registryHost($0) == wanted }.sorted()
        }
    }

    /// The mapped registries with their user names (docker's `list`).
    package static func registries(in file: ConfigFile) -> [(server: String, username: String)] {
        file.registries.sorted { $0.key < $1.key }.map { ($0.key, CredentialTarget(entry: $0.key, section: $0.value).username) }
    }

    /// Whether a token may go to `scheme://host` (`host` with its `:port`): over https, or over
    /// http to a loopback address only, as for providers (``PlainURL/isLoopback(host:)``).
    package static func carriesTokens(scheme: String, host: String) -> Bool {
        switch scheme.lowercased() {
        case "https": return true
        case "http":
            let name: Substring
            if host.hasPrefix("["), let close = host.firstIndex(of: "]") {
                name = host[...close]
            } else if host.filter({ $0 == ":" }).count > 1 {
                name = Substring(host)  // an IPv6 address as Foundation gives it, without brackets or port
            } else {
                name = host.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            }
            return PlainURL.isLoopback(host: String(name))
        default: return false
        }
    }

    /// `host[:port]` of a registry reference, lowercased, without scheme, user or path; empty
    /// when it names no host. A scheme counts only at the very start (`https://`), so a path
    /// that merely contains `://` (`evil.example/x://registry.example.com`) names the host
    /// before its first `/`.
    package static func registryHost(_ server: String) -> String {
        guard !hidesDelimiter(server) else { return "" }
        var text = Substring(server.trimmingASCIIWhitespace())
        if let scheme = schemeSeparator(in: text) {
            let name = text[..<scheme.lowerBound]
            let isScheme =
                name.first?.asciiValue.map { (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) } == true
                && name.utf8.allSatisfy { byte in
                    (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte)
                        || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".")
                }
            if isScheme { text = text[scheme.upperBound...] }
        }
        if let slash = text.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) { text = text[..<slash] }
        if let at = text.lastIndex(of: "@") { text = text[text.index(after: at)...] }
        let host = text.lowercased()
        return isPlainHost(host, internationalized: false) ? host : ""
    }

    /// Where the first `://` of `text` is, by characters (by hand: `firstRange(of:)` is the
    /// regex engine's, which Embedded Swift has not).
    static func schemeSeparator(in text: Substring) -> Range<Substring.Index>? {
        var index = text.startIndex
        while index < text.endIndex {
            if text[index...].starts(with: "://") {
                return index..<text.index(index, offsetBy: 3)
            }
            index = text.index(after: index)
        }
        return nil
    }

    /// Whether `text` has a URL delimiter (`/ ? # @ \ :`) joined to a combining mark or another
    /// scalar into one `Character`: Swift's searches by `Character` do not see it, while curl,
    /// a server and every RFC 3986 parser do (`team-a/../\u{301}x.git` holds no `..` segment
    /// for us, and one for curl). Such a URL or path is refused, not guessed at.
    static func hidesDelimiter(_ text: some StringProtocol) -> Bool {
        text.contains { character in
            character.unicodeScalars.count > 1 && character.unicodeScalars.contains { "/?#@\\:".unicodeScalars.contains($0) }
        }
    }

    /// Whether a lowercased `host[:port]` is a host name, an IPv4 or a bracketed IPv6 address
    /// and a port, nothing escaped (and, when `internationalized`, an IDN as written).
    static func isPlainHost(_ host: String, internationalized: Bool) -> Bool {
        host.utf8.allSatisfy { byte in
            (internationalized && byte >= 0x80) || (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte)
                || "-.:[]_".utf8.contains(byte)
        }
    }

    /// A `[credential "URL"]` name taken apart: scheme, user (when named), host (with
    /// `:port`; an IPv6 literal keeps its brackets), normalised path segments.
    struct ParsedURL {
        var scheme: String
        var user: String?
        var host: String
        var path: [String]

        init?(_ url: String) {
            guard !CredentialMap.hidesDelimiter(url), let separator = CredentialMap.schemeSeparator(in: url[...]) else { return nil }
            scheme = url[..<separator.lowerBound].lowercased()
            var rest = url[separator.upperBound...]
            // A query or a fragment names nothing a mapping matches, and what comes before one
            // would pass for user info (`https://evil.example?@registry.example/`, fetched from
            // evil.example): refused, as is a backslash (a path separator to some parsers).
            guard !rest.contains("?"), !rest.contains("#"), !rest.contains("\\") else { return nil }
            let authorityEnd = rest.firstIndex(of: "/") ?? rest.endIndex
            if let at = rest[..<authorityEnd].lastIndex(of: "@") {
                let userinfo = rest[..<at]
                guard !userinfo.contains("@") else { return nil }
                let name = userinfo.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
                user = CredentialMap.percentDecoded(name)
                rest = rest[rest.index(after: at)...]
            }
            let slash = rest.firstIndex(of: "/") ?? rest.endIndex
            host = rest[..<slash].lowercased()
            guard !host.isEmpty, CredentialMap.isPlainHost(host, internationalized: true),
                let path = CredentialMap.normalizedPath(String(rest[slash...]))
            else { return nil }
            self.path = path
        }
    }
}
