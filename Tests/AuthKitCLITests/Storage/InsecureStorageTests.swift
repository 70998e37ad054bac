import Foundation
import TestSupport
import Testing

/// `--insecure-storage`: the plain file, chosen explicitly, says so everywhere, and is 0600.
@Suite struct InsecureStorageTests {
    @Test func plainFileIsAnnouncedAndPrivate() async throws {
        let world = try await CLIHarness.start()
        defer { world.stop() }
        let login = try await world.signIn(["--insecure-storage"])
        #expect(login.stderr.contains("  stored:  PLAIN FILE "), "\(login.stderr)")
        #expect(login.stderr.contains("WARNING: the tokens are in a plain file, not encrypted"))

        // The file: under $XDG_STATE_HOME/authkit, readable by its owner only.
        let files = try FileManager.default.subpathsOfDirectory(atPath: world.stateDirectory.path)
            .map { world.stateDirectory.appendingPathComponent($0) }
            .filter { (try? $0.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true }
        #expect(!files.isEmpty, "no file under \(world.stateDirectory.path)")
        for file in files {
            let mode = try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? Int
            #expect(mode == 0o600, "\(file.lastPathComponent) has mode \(String(mode ?? 0, radix: 8))")
            #expect(login.stderr.contains(file.path) || login.stderr.contains(world.stateDirectory.path))
        }

        let status = try await world.authkit(["status", "--group", world.group, "--insecure-storage"])
        #expect(status.status == 0, "\(status.stderr)")
        #expect(status.stdout.contains("    storage:        PLAIN FILE "))
        #expect(status.stdout.contains("WARNING: the tokens are in a plain file, not encrypted"))
        let json = try PeerJSON(
            data: Data(try await world.authkit(["status", "--group", world.group, "--insecure-storage", "--json"]).stdout.utf8))
        #expect(json["accounts"][0]["storage"]["kind"] == .string("plain-file"))
        #expect(json["accounts"][0]["storage"]["encrypted"] == .bool(false))
        #expect(json["accounts"][0]["storage"]["path"].string?.hasPrefix(world.stateDirectory.path) == true)

        // The Secret Service holds nothing: the two stores are separate. Without a flag the
        // sign-in is found where it was stored (the login recorded it), and still announced.
        #expect(try await world.authkit(["status", "--group", world.group, "--storage", "secret-service"]).status == 1)
        let plain = try await world.authkit(["status", "--group", world.group])
        #expect(plain.status == 0 && plain.stdout.contains("    storage:        PLAIN FILE "), "\(plain.stdout) \(plain.stderr)")
        let token = try await world.authkit(["token", "--group", world.group, "--insecure-storage"])
        #expect(token.status == 0)
        // AUTHKIT_STORAGE=plain-file is the same choice, for scripts.
        let viaEnvironment = try await world.authkit(["token", "--group", world.group], environment: ["AUTHKIT_STORAGE": "plain-file"])
        #expect(viaEnvironment.stdout == token.stdout)

        let logout = try await world.authkit(["logout", "--group", world.group, "--insecure-storage"])
        #expect(logout.status == 0, "\(logout.stderr)")
        #expect(try await world.authkit(["status", "--group", world.group, "--insecure-storage"]).status == 1)
        try await world.assertNoSecretsLeaked()
    }
}
