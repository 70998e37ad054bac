@testable import AuthKit
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Issue 15: a config file others can write, or another user's, never steers authkit (like
/// OpenSSH's own files): refused whole, with the path, the mode and the command that fixes it.
@Suite struct ConfigTrustTests {
    /// Another account's uid for ownership tests: `nobody` (65534) on Debian.
    static let otherUID: uid_t = 65534

    func withConfig(_ body: (_ directory: String, _ path: String) throws -> Void) throws {
        let directory = try TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("config").path
        try "[profile p]\nissuer = https://idp.example\ngraph_url = https://graph.example/v1.0\n".write(toFile: path, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: path)
        try body(directory.path, path)
    }

    func refusal(_ path: String) -> String? {
        do {
            _ = try ConfigFile.load(environment: ["AUTHKIT_CONFIG": path])
            return nil
        } catch {
            return error.description
        }
    }

    @Test func anOwnFileOthersCannotWriteIsUsed() throws {
        try withConfig { _, path in
            #expect(refusal(path) == nil)
            #expect(ConfigTrust.problem(path: path) == nil)
        }
    }

    @Test(arguments: [0o666, 0o646, 0o664, 0o620])
    func aFileOthersCanWriteIsRefused(mode: Int) throws {
        try withConfig { _, path in
            try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
            let message = try #require(refusal(path))
            #expect(message.hasPrefix(path + ": authkit does not use this file: it is writable by"))
            #expect(message.contains("(mode \(String(mode, radix: 8)))"))
            #expect(message.contains("chmod go-w \(path)"))
        }
    }

    @Test func aDirectoryOthersCanWriteIsRefusedUnlessSticky() throws {
        try withConfig { directory, path in
            try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: directory)
            let message = try #require(refusal(path))
            #expect(message.contains("its directory \(directory) is writable by every user"))
            #expect(message.contains("chmod go-w \(directory)"))
            // Sticky (as /tmp): others may add files but not replace ours.
            try FileManager.default.setAttributes([.posixPermissions: 0o1777], ofItemAtPath: directory)
            #expect(refusal(path) == nil)
            try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: directory)
        }
    }

    @Test func anotherUsersFileIsRefusedAlsoThroughASymlink() throws {
        try withConfig { directory, path in
            // As root (CI) the file can be given away; as another user the test can only ask
            // the check directly with a uid that is not the file's.
            if getuid() == 0 {
                #expect(chown(path, Self.otherUID, Self.otherUID) == 0)
                let message = try #require(refusal(path))
                #expect(message.contains("it belongs to nobody"))
                #expect(message.contains("chown root \(path)"))
                // My own symlink to that file is refused the same way.
                let link = directory + "/link"
                try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: path)
                #expect(try #require(refusal(link)).contains("it belongs to nobody"))
            } else {
                #expect(try #require(ConfigTrust.problem(path: path, uid: getuid() + 1)).contains("belongs to"))
            }
        }
    }
}
