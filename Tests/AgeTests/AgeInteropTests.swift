import Foundation
@testable import Age
import TestSupport
import Testing

/// Debian's real `age` 1.1.1 (package `age`) decrypts what authkit encrypts, and authkit reads
/// what `age-keygen`, `age -r` and `age -p` write (binary and armored, empty to multi-chunk);
/// a passphrase-sealed identity file opens with `age -d` and serves as `age -d -i`. age reads passphrases from its terminal only: a pty
/// driven by Python types them.
@Suite struct AgeInteropTests {
    static let age = RealAge.age
    static let keygen = RealAge.keygen
    static let ptyDriver = RealAge.ptyDriver

    static let sizes = [0, 1, 100, AgeStream.chunkSize, AgeStream.chunkSize + 1, 3 * AgeStream.chunkSize + 17]

    static func plaintext(_ size: Int) -> [UInt8] { (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) } }

    func withFolder(_ body: (URL) throws -> Void) throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.age.path), "age is not installed (scripts/bootstrap installs it)")
        let folder = try TestPaths.makeTemporaryDirectory(prefix: "authkit-age")
        defer { try? FileManager.default.removeItem(at: folder) }
        try body(folder)
    }

    func run(_ executable: URL, _ arguments: [String]) throws -> ProcessResult {
        let result = try ProcessRunner.run(executable, arguments, timeout: 60)
        #expect(result.status == 0, "\(executable.lastPathComponent) \(arguments): \(result.stderr)")
        return result
    }

    func runOnTerminal(passphrase: String, _ arguments: [String]) throws -> ProcessResult {
        try ProcessRunner.run(TestPaths.python, ["-c", Self.ptyDriver, passphrase, Self.age.path] + arguments, timeout: 120)
    }

    func read(_ url: URL) throws -> [UInt8] { [UInt8](try Data(contentsOf: url)) }

    @Test(arguments: [false, true]) func ageDecryptsWhatAuthkitEncrypts(armored: Bool) throws {
        try withFolder { folder in
            let identity = try X25519Identity.generate()
            let other = try X25519Identity.generate()
            let identityFile = folder.appendingPathComponent("identity.txt")
            try identity.secretKey.write(to: identityFile, atomically: true, encoding: .utf8)
            for size in Self.sizes {
                let input = Self.plaintext(size)
                let sealed = try AgeFile.encrypt(input, to: [other.recipient, identity.recipient], armored: armored)
                let file = folder.appendingPathComponent("file-\(size).age"), output = folder.appendingPathComponent("out-\(size)")
                try Data(sealed).write(to: file)
                _ = try run(Self.age, ["-d", "-i", identityFile.path, "-o", output.path, file.path])
                // age creates its -o file on the first byte out: none for an empty plaintext.
                let opened = size == 0 && !FileManager.default.fileExists(atPath: output.path) ? [] : try read(output)
                #expect(opened == input, "size \(size)")
            }
        }
    }

    @Test func authkitReadsAgeKeygenIdentitiesAndAgeRecipientFiles() throws {
        try withFolder { folder in
            let keyFile = folder.appendingPathComponent("key.txt")
            _ = try run(Self.keygen, ["-o", keyFile.path])
            let identities = try AgeIdentityFile.parse(try read(keyFile))
            #expect(identities.count == 1)
            let recipient = try run(Self.keygen, ["-y", keyFile.path]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(try X25519Recipient(recipient) == identities[0].recipient)
            #expect(identities[0].recipient.description == recipient)
            for size in Self.sizes {
                for armor in [false, true] {
                    let input = folder.appendingPathComponent("in"), file = folder.appendingPathComponent("in.age")
                    try Data(Self.plaintext(size)).write(to: input)
                    try? FileManager.default.removeItem(at: file)
                    _ = try run(Self.age, ["-r", recipient] + (armor ? ["-a"] : []) + ["-o", file.path, input.path])
                    let opened = try AgeFile.decrypt(try read(file), with: [.x25519(identities[0])])
                    #expect(opened == Self.plaintext(size), "size \(size), armored \(armor)")
                }
            }
            // A file for another key is no match, not damage.
            let stranger = try X25519Identity.generate()
            let file = folder.appendingPathComponent("in.age")
            #expect(throws: AgeError.noIdentityMatches) { try AgeFile.decrypt(try read(file), with: [.x25519(stranger)]) }
        }
    }

    @Test func authkitReadsAgePassphraseFiles() throws {
        try withFolder { folder in
            let input = folder.appendingPathComponent("in"), file = folder.appendingPathComponent("in.age")
            let text = Array("a sign-in, sealed by age -p".utf8)
            try Data(text).write(to: input)
            let made = try runOnTerminal(passphrase: "correct horse battery", ["-p", "-o", file.path, input.path])
            try #require(made.status == 0, "age -p: \(made.stderr)")
            let sealed = try read(file)
            #expect(try AgeFile.decrypt(sealed, with: [.passphrase(try AgePassphrase("correct horse battery"))]) == text)
            #expect(throws: AgeError.wrongPassphrase) {
                try AgeFile.decrypt(sealed, with: [.passphrase(try AgePassphrase("correct horse"))])
            }
            let identity = try X25519Identity.generate()
            #expect(throws: AgeError.noIdentityMatches) { try AgeFile.decrypt(sealed, with: [.x25519(identity)]) }
        }
    }

    @Test func authkitOpensAnIdentityFileSealedByAge() throws {
        try withFolder { folder in
            let keyFile = folder.appendingPathComponent("key.txt"), sealed = folder.appendingPathComponent("key.age")
            _ = try run(Self.keygen, ["-o", keyFile.path])
            let made = try runOnTerminal(passphrase: "pass phrase", ["-p", "-a", "-o", sealed.path, keyFile.path])
            try #require(made.status == 0, "age -p -a: \(made.stderr)")
            let bytes = try read(sealed)
            #expect(AgeIdentityFile.isSealed(bytes))
            let identities = try AgeIdentityFile.open(bytes, passphrase: try AgePassphrase("pass phrase"))
            #expect(identities.map(\.secretKey) == (try AgeIdentityFile.parse(try read(keyFile))).map(\.secretKey))
            #expect(throws: AgeError.wrongPassphrase) { try AgeIdentityFile.open(bytes, passphrase: try AgePassphrase("pass")) }
        }
    }

    @Test func ageOpensAnIdentityFileSealedByAuthkit() throws {
        try withFolder { folder in
            let identity = try X25519Identity.generate()
            let sealedFile = folder.appendingPathComponent("identity.age")
            let sealed = try AgeIdentityFile.seal(identity, passphrase: try AgePassphrase("unlock me"))
            try Data(sealed).write(to: sealedFile)
            // age -d with the passphrase gives back the identity file, age-keygen's layout.
            let output = folder.appendingPathComponent("identity.txt")
            let opened = try runOnTerminal(passphrase: "unlock me", ["-d", "-o", output.path, sealedFile.path])
            try #require(opened.status == 0, "age -d: \(opened.stderr)")
            let lines = String(decoding: try read(output), as: UTF8.self).split(separator: "\n").map(String.init)
            #expect(lines.count == 3)
            #expect(lines.first?.hasPrefix("# created: ") == true)
            #expect(lines.dropFirst().first == "# public key: \(identity.recipient)")
            #expect(lines.last == identity.secretKey)
            // And age takes the sealed file itself as an identity (-i), asking for its passphrase.
            let file = folder.appendingPathComponent("token.age"), plain = folder.appendingPathComponent("token")
            try Data(try AgeFile.encrypt(Array("token".utf8), to: [identity.recipient])).write(to: file)
            let decrypted = try runOnTerminal(passphrase: "unlock me", ["-d", "-i", sealedFile.path, "-o", plain.path, file.path])
            try #require(decrypted.status == 0, "age -d -i: \(decrypted.stderr)")
            #expect(try read(plain) == Array("token".utf8))
        }
    }
}
