import ArgumentParser
import AuthKit
import AuthKitCore
import ChildProcess
import SecretStore
import JOSE

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#endif

/// Shared pieces of the setup commands.
enum Setup {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// The running authkit's absolute path (what the clients' configurations run).
    static func executablePath() -> String {
        var buffer = [CChar](repeating: 0, count: 4096)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        if count > 0 { return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self) }
        return CommandLine.arguments.first ?? "authkit"
    }

    /// Whether the symbolic link `link` names `target` itself, or a file beside the link (a
    /// relative name without `/`) that is the same file as `target`, or the lean client installed
    /// with `target` (the package's `docker-credential-authkit -> ../lib/authkit/authkit-lean`,
    /// which hands what it does not answer to `target`). A link that wanders elsewhere is not kept.
    static func leadsTo(_ link: String, _ target: String) -> Bool {
        guard let named = try? FileManager.default.destinationOfSymbolicLink(atPath: link) else { return false }
        if named == target { return true }
        guard let resolved = resolvedPath(link), let wanted = resolvedPath(target) else { return false }
        if !named.contains("/") && resolved == wanted { return true }
        return resolved == resolvedPath(leanClient(of: target) ?? "")
    }

    /// The lean client installed with the authkit at `executable`, when there is one: an
    /// executable `authkit-lean` in `../lib/authkit/` from its folder (the package, the tarball,
    /// the README's install from source) whose `authkit` beside it is `executable` — the one it
    /// hands what it does not answer to.
    static func leanClient(of executable: String) -> String? {
        let lean = directory(of: directory(of: executable)) + "/lib/authkit/authkit-lean"
        guard access(lean, X_OK) == 0, let beside = resolvedPath(directory(of: lean) + "/authkit"), beside == resolvedPath(executable)
        else { return nil }
        return lean
    }

    /// What a client's configuration runs for the plug-in of `client`: the lean client installed
    /// with this authkit where it answers that plug-in (faster, the same answers), else authkit.
    static func plugInProgram(_ client: String, executable: String = executablePath()) -> String {
        guard LeanTokenPlan.plugInsAnswered.contains(client), let lean = leanClient(of: executable) else { return executable }
        return lean
    }

    private static func resolvedPath(_ path: String) -> String? {
        guard !path.isEmpty, let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// `word` quoted for the shell git runs `!`-helpers with.
    static func shellQuoted(_ word: String) -> String {
        word.allSatisfy({ $0.isLetter || $0.isNumber || "/._-+:=@".contains($0) })
            ? word : "'" + word.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "'\\''") + "'"
    }

    /// Runs a program (found on PATH) with standard error discarded and no input, returning
    /// its status and standard output.
    static func run(_ program: String, _ arguments: [String]) throws(Failure) -> (status: Int32, output: String) {
        do throws(ChildProcess.SpawnError) {
            let (termination, bytes) = try ChildProcess.capture([program] + arguments)
            return (termination.status, String(decoding: bytes, as: UTF8.self))
        } catch {
            throw Failure(description: error.description)
        }
    }

    /// The directory part of a path.
    static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// A `[kind "name"]` section for authkit's config file, checked and ready to write: every
    /// value validated, and the whole new file parsed back, so that nothing is written unless
    /// the file stays one every command can read, holding exactly this section.
    struct SectionPlan {
        var path: String
        var text: String
        /// The file's bytes before (nil: it did not exist), for ``undo()``.
        var previous: [UInt8]?
        /// The new file's bytes; nil when the section is there already.
        var replacement: [UInt8]?
        /// True when the new file replaces a section setup wrote before.
        var updates = false

        /// What `--print` shows.
        var printed: String { "# \(path)\n\(text)" }

        /// The section's `[kind "name"]` line, to report.
        var header: Substring { text.textLines().first { $0.hasPrefix("[") } ?? "" }

        /// Writes the new file (nothing when the section was there) and says what happened.
        func write() throws(Failure) -> String {
            guard let replacement else { return "\(path): \(header) already set" }
            do {
                try makeFolder(Setup.directory(of: path), mode: 0o700)
                try writeAtomically(replacement, to: path, mode: 0o600)
            } catch {
                throw Failure(description: "cannot write \(path): \(error)")
            }
            return "\(path): \(updates ? "updated" : "added") \(header)"
        }

        /// Writes the new file, then runs the client's own steps; when one fails, the file is
        /// put back as it was. Returns what was written, to report.
        func apply(then steps: () throws(Failure) -> Void) throws(Failure) -> String {
            let written = try write()
            do throws(Failure) {
                try steps()
            } catch {
                undo()
                throw error
            }
            return written
        }

        /// Puts the file back as it was (a later step failed).
        func undo() {
            guard replacement != nil else { return }
            if let previous {
                try? writeAtomically(previous, to: path, mode: 0o600)
            } else {
                unlink((try? AtomicFile.linkTarget(of: path)) ?? path)
            }
        }
    }

    /// Appends `section` (its first line is `header`) to another tool's INI-like file — cargo's
    /// config.toml, the AWS config — keeping the rest byte for byte. A file that has the same
    /// section already is left alone; one whose section says something else is refused (to
    /// be edited by hand). Returns what was done, for the report.
    static func appendSection(_ section: String, header: String, to path: String, mode: mode_t) throws(Failure) -> String {
        var text = ""
        if FileManager.default.fileExists(atPath: path) {
            do { text = String(decoding: try FileAccess.read(path, limit: 4 << 20), as: UTF8.self) } catch {
                throw Failure(description: "\(path): \(error)")
            }
        }
        // The file a variable names (AWS_CONFIG_FILE, CARGO_HOME) must be such a file: one that
        // is something else — `/etc/sudoers`, from a `sudo -E` that kept another user's
        // variables — is not appended to.
        for (number, line) in text.textLines().enumerated() where !looksLikeINI(line) {
            throw Failure(
                description:
                    "\(path) does not read as a config file of [sections] and key = value lines (line \(number + 1)); nothing was written")
        }
        let present = text.textLines().contains { String($0).trimmingCharacters(in: " \t\r") == header }
        if present {
            guard text.contains(section) else {
                throw Failure(description: "\(path) has \(header) already, saying something else; edit it by hand to read:\n\(section)")
            }
            return "\(path): \(header) already set"
        }
        let separator = text.isEmpty || text.hasSuffix("\n\n") ? "" : (text.hasSuffix("\n") ? "\n" : "\n\n")
        try makeFolder(directory(of: path), mode: 0o700)
        try writeAtomically(Array((text + separator + section).utf8), to: path, mode: mode)
        return "\(path): added \(header)"
    }

    /// A line of an INI-like or TOML file: blank, a comment, a `[section]`, a `key = value`, or
    /// the rest of a value (indented, or a quote, bracket, brace or comma first).
    static func looksLikeINI(_ line: Substring) -> Bool {
        guard let first = line.first else { return true }
        return line.contains("=") || first == " " || first == "\t" || "#;[]{}\"',\r".contains(first)
    }

    /// The sections of an INI-like file (`[NAME]` headers, named by `name`) that hold a line
    /// `matches` accepts: which profiles or registries run authkit, for `setup --list`.
    static func sections(of path: String, name: (String) -> String?, holding matches: (String) -> Bool) -> [String] {
        guard let bytes = try? FileAccess.read(path, limit: 4 << 20), let text = String(validating: bytes, as: UTF8.self) else { return [] }
        var found: [String] = []
        var current: String?
        for line in text.textLines() {
            let trimmed = String(line).trimmingCharacters(in: " \t\r")
            if trimmed.hasPrefix("[") && trimmed.hasSuffix("]") {
                current = name(String(trimmed.dropFirst().dropLast()).trimmingCharacters(in: " "))
            } else if let section = current, matches(trimmed), !found.contains(section) {
                found.append(section)
            }
        }
        return found
    }

    /// A value authkit's config file can hold as it is: no control character (a line break
    /// would start a new line, and a new section), no surrounding space, no `"`.
    static func checkValue(_ value: String, _ what: String) throws(Failure) {
        guard let first = value.unicodeScalars.first, let last = value.unicodeScalars.last, first != " ", last != " ",
            !value.unicodeScalars.contains(where: {
                $0.value < 0x20 || $0.value == 0x7F || $0 == "\"" || $0 == "\u{2028}" || $0 == "\u{2029}"
            })
        else { throw Failure(description: "\(what) must be one line without control characters, quotes or surrounding spaces") }
    }

    /// Plans the `[kind "name"]` section with `entries`: an error, nothing written, when a value
    /// cannot be written as it is, when the file cannot be read, or when a different section of
    /// that name is there.
    static func planSection(
        kind: ConfigFile.MappingKind, name: String, option: String, entries: [(String, String)]
    ) throws(Failure) -> SectionPlan {
        try checkValue(name, option)
        guard !name.contains(" "), !name.contains("]") || name.contains("[") else {
            throw Failure(description: "\(option) must not contain spaces")
        }
        for (key, value) in entries { try checkValue(value, "--\(key == "scopes" ? "scope" : key)") }
        let environment = ProcessInfo.processInfo.environment
        let path = ConfigFile.location(environment: environment)
        var text = "\(sectionMark)\n[\(kind.rawValue) \"\(name)\"]\n"
        for (key, value) in entries { text += "\(key) = \(value)\n" }
        var previous: [UInt8]?
        var replacing: ClosedRange<Int>?
        if FileManager.default.fileExists(atPath: path) {
            let file: ConfigFile
            do {
                file = try ConfigFile.load(environment: environment)
                previous = try FileAccess.read(path)
            } catch { throw Failure(description: "\(error)") }
            // Beside an entry that names the same URL or registry, every request would be
            // ambiguous: that entry is the one to edit.
            if let other = CredentialMap.equivalents(of: name, kind: kind, in: file).first, let line = file.mappings(kind)[other]?.line {
                throw Failure(
                    description:
                        "\(path):\(line): [\(kind.rawValue) \"\(other)\"] names the same \(kind == .credential ? "URL" : "registry"); edit it there"
                )
            }
            if let existing = file.mappings(kind)[name] {
                let wanted = Dictionary(entries, uniquingKeysWith: { $1 })
                if existing.entries.mapValues(\.value) == wanted {
                    return SectionPlan(path: path, text: text, previous: previous, replacement: nil)
                }
                // setup's own section (its mark above it) or an empty one holds nothing of the
                // user's: it is replaced. Any other is the user's to edit.
                let lines = String(decoding: previous ?? [], as: UTF8.self).textLines()
                let marked = existing.line >= 2 && lines[existing.line - 2] == sectionMark
                guard marked || existing.entries.isEmpty else {
                    throw Failure(
                        description: "\(path):\(existing.line): [\(kind.rawValue) \"\(name)\"] exists with other settings; edit it there")
                }
                let last = existing.entries.values.map(\.line).max() ?? existing.line
                replacing = (marked ? existing.line - 1 : existing.line)...last
            }
        }
        let updated: String
        if let replacing {
            // Lines are counted from 1; the section's lines give way to the new text.
            var lines = String(decoding: previous ?? [], as: UTF8.self).textLines()
                .map(String.init)
            lines.replaceSubrange((replacing.lowerBound - 1)...(replacing.upperBound - 1), with: [String(text.dropLast())])
            updated = lines.joined(separator: "\n")
        } else {
            var current = previous.map { String(decoding: $0, as: UTF8.self) } ?? ""
            if !current.isEmpty && !current.hasSuffix("\n") { current += "\n" }
            if !current.isEmpty { current += "\n" }
            updated = current + text
        }
        // Read back as every command will: the same file plus exactly this section.
        let parsed: ConfigFile
        do { parsed = try ConfigFile.parse(updated, path: path) } catch {
            throw Failure(description: "the mapping would not be readable (\(error)); nothing was written")
        }
        let section = parsed.mappings(kind)[name]
        guard let section, section.entries.mapValues(\.value) == Dictionary(entries, uniquingKeysWith: { $1 }) else {
            throw Failure(description: "the mapping would not read back as written; nothing was written")
        }
        return SectionPlan(path: path, text: text, previous: previous, replacement: Array(updated.utf8), updates: replacing != nil)
    }

    /// The comment setup writes above each section it adds: a section under it is setup's to
    /// replace when setup runs again with other settings.
    static let sectionMark = "# written by authkit setup (it updates this section when run again)"

    /// Makes `directory` and the folders above it that are missing, once the way to it passed
    /// ``AtomicFile/linkTarget(of:)``'s checks (as root: nobody else's folder or link on it).
    static func makeFolder(_ directory: String, mode: Int) throws(Failure) {
        do throws(AtomicFile.Failure) {
            _ = try AtomicFile.linkTarget(of: directory + "/.")
        } catch {
            throw Failure(description: "cannot \(error.operation) \(error.path): \(error.reason)")
        }
        try? FileManager.default.createDirectory(
            atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: mode])
    }

    /// Replaces `path` whole (``AtomicFile``), keeping an existing file's mode. A symbolic link
    /// there (a dotfile kept in another folder) stays: the file it names is replaced.
    static func writeAtomically(_ bytes: [UInt8], to path: String, mode: mode_t) throws(Failure) {
        do throws(AtomicFile.Failure) {
            try AtomicFile.write(bytes, to: path, mode: mode, keepingMode: true, throughLinks: true)
        } catch {
            throw Failure(description: "cannot \(error.operation) \(error.path): \(error.reason)")
        }
    }

}
