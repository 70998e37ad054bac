import Foundation
import Testing
@testable import SecretStore

#if canImport(Glibc)
import Glibc
#endif

/// `setup`'s writes through links: the file a chain of links names, and only through folders,
/// links and files of this user or root.
@Suite struct AtomicFileTests {
    static func scratch() throws -> String {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("atomic-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder + "/dotfiles", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: folder + "/home/.docker", withIntermediateDirectories: true)
        return folder
    }

    @Test("a chain of links, relative and absolute, ends at the file it names; the link stays")
    func followsOwnLinks() throws {
        let root = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: root) }
        #expect(symlink("../../dotfiles/middle", root + "/home/.docker/config.json") == 0)
        #expect(symlink(root + "/dotfiles/config.json", root + "/dotfiles/middle") == 0)
        // Not there yet: the path it will have.
        #expect(try AtomicFile.linkTarget(of: root + "/home/.docker/config.json") == root + "/dotfiles/config.json")
        try AtomicFile.write(Array("{}".utf8), to: root + "/home/.docker/config.json", mode: 0o600, throughLinks: true)
        #expect(try String(contentsOfFile: root + "/dotfiles/config.json", encoding: .utf8) == "{}")
        #expect(try AtomicFile.linkTarget(of: root + "/home/./.docker/../.docker/config.json") == root + "/dotfiles/config.json")
        #expect(try AtomicFile.linkTarget(of: root + "/home/.docker/missing/deeper") == root + "/home/.docker/missing/deeper")
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: root + "/home/.docker/config.json")) == "../../dotfiles/middle")
    }

    @Test("a link to a folder or a device, or a loop, is refused")
    func refusesOtherEnds() throws {
        let root = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: root) }
        #expect(symlink("/dev/null", root + "/home/device") == 0)
        #expect(symlink(root + "/dotfiles", root + "/home/folder") == 0)
        #expect(symlink("loop", root + "/home/loop") == 0)
        for name in ["device", "folder"] {
            #expect(throws: AtomicFile.Failure.self) { try AtomicFile.linkTarget(of: root + "/home/" + name) }
        }
        #expect { try AtomicFile.linkTarget(of: root + "/home/loop") } throws: { ($0 as? AtomicFile.Failure)?.errno == ELOOP }
    }

    /// What `su` without `-` leads to: root's setup with another user's `HOME`, where that user
    /// links a dotfile to a file only root may write.
    @Test(
        "as root: a folder, link or file of another user on the way, or a folder others may add to, is refused, and nothing is written",
        .enabled(if: geteuid() == 0, "the rule is root's, and giving a file to another user needs root (CI runs the suite as root)"))
    func refusesOtherUsersPaths() throws {
        let root = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let victim = root + "/dotfiles/only-root-writes-this"
        try "secret settings".write(toFile: victim, atomically: false, encoding: .utf8)
        func refused(_ path: String, _ words: String) -> Bool {
            do {
                try AtomicFile.write(Array("{}".utf8), to: path, mode: 0o600, throughLinks: true)
                return false
            } catch {
                return error.reason.contains(words) && error.reason.contains("run authkit setup as the user whose files these are")
            }
        }
        // Their home folder.
        #expect(chown(root + "/home", 65534, 65534) == 0)
        #expect(symlink(victim, root + "/home/.docker/config.json") == 0)
        for path in [root + "/home/.docker/config.json", root + "/home/.docker/new.json"] {
            #expect(refused(path, root + "/home is on the way, and it belongs to another user (uid 65534)"), "\(path)")
        }
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "secret settings")
        #expect(!FileManager.default.fileExists(atPath: root + "/home/.docker/new.json"))
        // Their link in a folder of root's, and their file at the end.
        #expect(chown(root + "/home", 0, 0) == 0)
        #expect(lchown(root + "/home/.docker/config.json", 65534, 65534) == 0)
        #expect(refused(root + "/home/.docker/config.json", "belongs to another user"))
        #expect(lchown(root + "/home/.docker/config.json", 0, 0) == 0 && chown(victim, 65534, 65534) == 0)
        #expect(refused(root + "/home/.docker/config.json", "belongs to another user"))
        #expect(chown(victim, 0, 0) == 0)
        // A folder of root's that another group, or everybody, may write in: whoever may could
        // swap what is on the way. Root's own group, or a sticky folder holding root's, is fine.
        #expect(chmod(root + "/home", 0o775) == 0 && chown(root + "/home", 0, 65534) == 0)
        #expect(refused(root + "/home/.docker/config.json", "others may write in it"))
        #expect(chown(root + "/home", 0, 0) == 0)
        #expect(try AtomicFile.linkTarget(of: root + "/home/.docker/config.json") == victim)
        #expect(chmod(root + "/home", 0o1777) == 0)
        #expect(try AtomicFile.linkTarget(of: root + "/home/.docker/config.json") == victim)
        // ... but a name still to be made there could be made by anyone first.
        #expect(refused(root + "/home/new/config.json", "others may write in it"))
        #expect(chmod(root + "/home", 0o755) == 0)
        #expect(try AtomicFile.linkTarget(of: root + "/home/new/config.json") == root + "/home/new/config.json")
    }
}
