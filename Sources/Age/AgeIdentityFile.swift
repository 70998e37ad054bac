#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Identity files as `age-keygen` writes them and `age -i` reads them: `#` comment lines
/// (`# created: …`, `# public key: age1…`), empty lines, and one `AGE-SECRET-KEY-1…` a line;
/// and the same file sealed with a passphrase (an age file with one scrypt stanza, as
/// `age-keygen | age -p` makes, which `age -d` opens with the passphrase and `age -i` reads).
package enum AgeIdentityFile {
    /// age's bound on an identity file (16 MiB).
    package static let maximumBytes = 1 << 24

    /// The text of an identity file for `identity`, as age-keygen writes it. Secret.
    package static func text(for identity: X25519Identity, created: time_t = time(nil)) -> SecretBytes {
        var moment = tm()
        var stamp = [CChar](repeating: 0, count: 32)
        var seconds = created
        let length = gmtime_r(&seconds, &moment) == nil ? 0 : strftime(&stamp, stamp.count, "%Y-%m-%dT%H:%M:%SZ", &moment)
        let date = String(decoding: stamp.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        var text = Array("# created: \(date)\n# public key: \(identity.recipient)\n\(identity.secretKey)\n".utf8)
        defer { SecretBytes.wipe(&text) }
        return SecretBytes(text)
    }

    /// The identities of an identity file's text: every line not empty and not a comment
    /// must be an X25519 identity; there must be at least one.
    package static func parse(_ bytes: [UInt8]) throws(AgeError) -> [X25519Identity] {
        guard bytes.count <= maximumBytes else { throw .malformedIdentityFile(line: 0, reason: "larger than 16 MiB") }
        var identities: [X25519Identity] = []
        // Lines end with LF; a CR before it is dropped (as Go's bufio.ScanLines does).
        for (index, raw) in bytes.split(separator: 0x0A, omittingEmptySubsequences: false).enumerated() {
            let line = raw.last == 0x0D ? raw.dropLast() : raw
            if line.isEmpty || line.first == UInt8(ascii: "#") { continue }
            guard let text = String(validating: line, as: UTF8.self) else {
                throw .malformedIdentityFile(line: index + 1, reason: "not UTF-8 text")
            }
            do {
                identities.append(try X25519Identity(secretKey: text))
            } catch {
                throw .malformedIdentityFile(line: index + 1, reason: reason(for: line))
            }
        }
        guard !identities.isEmpty else { throw .malformedIdentityFile(line: 0, reason: "no AGE-SECRET-KEY-1 identity in it") }
        return identities
    }

    /// The identity file's text sealed with `passphrase`, armored (it is text to back up).
    package static func seal(
        _ identity: X25519Identity, passphrase: AgePassphrase, workFactor: Int = AgePassphrase.defaultWorkFactor,
        created: time_t = time(nil)
    ) throws(AgeError) -> [UInt8] {
        let text = Self.text(for: identity, created: created)
        return try text.withUnsafeBytes { (bytes) throws(AgeError) in
            try AgeFile.encrypt(bytes, passphrase: passphrase, workFactor: workFactor, armored: true)
        }
    }

    /// The identities of a passphrase-sealed identity file (binary or armored). A wrong
    /// passphrase is ``AgeError/wrongPassphrase``; a file that is not passphrase-encrypted is
    /// ``AgeError/noIdentityMatches``.
    package static func open(_ bytes: [UInt8], passphrase: AgePassphrase) throws(AgeError) -> [X25519Identity] {
        var text = try AgeFile.decrypt(bytes, with: [.passphrase(passphrase)])
        defer { SecretBytes.wipe(&text) }
        return try parse(text)
    }

    /// The identities of an identity file, sealed (then `passphrase` opens it) or plain.
    package static func read(_ bytes: [UInt8], passphrase: () throws(AgeError) -> AgePassphrase) throws(AgeError) -> [X25519Identity] {
        guard isSealed(bytes) else { return try parse(bytes) }
        return try open(bytes, passphrase: try passphrase())
    }

    /// Whether `bytes` are an age file (binary or armored) rather than an identity file's text.
    package static func isSealed(_ bytes: [UInt8]) -> Bool {
        AgeArmor.isArmored(bytes) || bytes.starts(with: AgeHeader.versionLine + [0x0A])
    }

    /// Why a line is not an identity, without repeating it (it may be a damaged secret key).
    private static func reason(for line: ArraySlice<UInt8>) -> String {
        if line.starts(with: "age1".utf8) { return "a recipient (public key) where an identity belongs" }
        if line.starts(with: "AGE-PLUGIN-".utf8) || line.starts(with: "AGE-SECRET-KEY-PQ-".utf8) {
            return "an identity of a type this program does not read (only X25519, AGE-SECRET-KEY-1…)"
        }
        return "not an AGE-SECRET-KEY-1 identity (damaged, or of another kind)"
    }
}
