@testable import AuthKit
import AuthKitCore
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A config file others can write, or another user's, never steers authkit (like OpenSSH's own
/// files): refused whole, with the path, the mode and the command that fixes it. What is
/// checked is the open descriptor that was read, and every directory its path passes through;
/// what cannot be checked is refused.
@Suite struct ConfigTrustTests {
    /// Another account's uid for ownership tests: `nobody` (65534) on Debian.
    static let otherUID: uid_t = 65534

    func withConfig(_ body: (_ directory: String, _ path: String) throws -> Void) throws {
        let directory = try TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("config").path
        try "[profile p]\nissuer = https://idp.example\ngraph_url = https://graph.example/v1.0\n".write(
            toFile: path, atomically: false, encoding: .utf8)
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

    @Test("a deleted file reached through /proc/self/fd is refused: its directories cannot be checked")
    func aDeletedFileIsRefused() throws {
        try withConfig { _, path in
            let fd = open(path, O_RDONLY | O_CLOEXEC)
            try #require(fd >= 0)
            defer { close(fd) }
            #expect(refusal("/proc/self/fd/\(fd)") == nil, "while the file exists, the link leads to it")
            #expect(unlink(path) == 0)
            let message = try #require(refusal("/proc/self/fd/\(fd)"))
            #expect(message.contains("authkit does not use this file"))
        }
    }

    @Test("a path through a directory another user controls is refused, wherever the link leads")
    func aLinkInAnotherUsersDirectoryIsRefused() throws {
        try withConfig { directory, path in
            let theirs = directory + "/theirs"
            try FileManager.default.createDirectory(atPath: theirs, withIntermediateDirectories: false)
            let link = theirs + "/config"
            try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: path)
            if getuid() == 0 {
                #expect(chown(theirs, Self.otherUID, Self.otherUID) == 0)
                #expect(try #require(refusal(link)).contains("its directory \(theirs) belongs to nobody"))
                // Through `..` as well: the walk checks each directory it enters.
                #expect(try #require(refusal(theirs + "/../theirs/config")).contains("belongs to nobody"))
                // A sticky, world-writable folder (as /tmp): another user's link in it is refused.
                let shared = directory + "/shared"
                try FileManager.default.createDirectory(atPath: shared, withIntermediateDirectories: false)
                chmod(shared, 0o1777)
                try FileManager.default.createSymbolicLink(atPath: shared + "/config", withDestinationPath: path)
                #expect(lchown(shared + "/config", Self.otherUID, Self.otherUID) == 0)
                #expect(try #require(refusal(shared + "/config")).contains("the symbolic link \(shared)/config belongs to nobody"))
                #expect(lchown(shared + "/config", 0, 0) == 0)
                #expect(refusal(shared + "/config") == nil, "my own link there is fine")
            } else {
                try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: theirs)
                #expect(try #require(refusal(link)).contains("its directory \(theirs) is writable by every user"))
            }
            #expect(refusal(directory + "/theirs/../config") == nil, "`..` out of it leads back to a trusted path")
        }
    }

    /// The race the second review won 5 times in 437: a link another user swaps between their
    /// own file and one of ours while authkit reads. Whatever was read at each moment, their
    /// file is never used.
    @Test("a link swapped in a loop never gets another user's file used")
    func aSwappedLinkNeverWins() throws {
        guard getuid() == 0 else { return }  // needs a file of another user (root gives it away)
        try withConfig { directory, path in
            let evil = directory + "/evil"
            try "[profile p]\nissuer = https://evil.example\n".write(toFile: evil, atomically: false, encoding: .utf8)
            #expect(chown(evil, Self.otherUID, Self.otherUID) == 0)
            let link = directory + "/link"
            let swapping = SharedFlag(true)
            let stopped = DispatchSemaphore(value: 0)
            let swapper = Thread {
                var flip = false
                while swapping.load() {
                    let staged = directory + "/link.new"
                    unlink(staged)
                    symlink(flip ? evil : path, staged)
                    rename(staged, link)
                    flip.toggle()
                }
                stopped.signal()
            }
            swapper.start()
            // Stopped, and waited for, before the folder is removed (else its last link could
            // land in a folder being deleted, and the folder stay behind).
            defer {
                swapping.store(false)
                stopped.wait()
            }
            var used = 0, refused = 0
            for _ in 0..<500 {
                do {
                    let file = try ConfigFile.load(environment: ["AUTHKIT_CONFIG": link])
                    #expect(file.profiles["p"]?.entries["issuer"]?.value == "https://idp.example", "another user's file was used")
                    used += 1
                } catch {
                    refused += 1
                }
            }
            #expect(used + refused == 500)
        }
    }
}

/// A flag two threads share.
final class SharedFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Bool
    init(_ value: Bool) { self.value = value }
    func load() -> Bool { lock.lock(); defer { lock.unlock() }; return value }
    func store(_ new: Bool) { lock.lock(); value = new; lock.unlock() }
}
