import AuthKit
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A new user's SSH session, as the README tells it: a sign-in in a group of its own on the
/// laptop, `authkit ssh --group` to a second account through a real sshd, with authkit in that
/// account's `~/.local/bin` (which a command ssh runs does not have on its PATH), and there
/// `authkit token`, `authkit setup git` and `git clone` with no group named anywhere — the
/// forward says which group it serves; a group it does not serve is refused with the ones it
/// does and the flag that names them.
@Suite struct ForwardedSessionWalkthroughTests {
    /// The remote account's own empty HOME (sshd sets it), with authkit in its `~/.local/bin`
    /// when `withAuthKit`, and an sshd that gives it that HOME.
    struct RemoteAccount {
        let root: URL
        let home: URL
        let server: TestSSHServer

        init(withAuthKit: Bool) async throws {
            root = try TestPaths.makeTemporaryDirectory(prefix: "authkit-remote")
            chmod(root.path, 0o755)
            let uid = getpwnam(TestSSHServer.user)?.pointee.pw_uid ?? 0
            let gid = getpwnam(TestSSHServer.user)?.pointee.pw_gid ?? 0
            let home = root.appendingPathComponent("home")
            let bin = home.appendingPathComponent(".local/bin")
            try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
            if withAuthKit {
                try FileManager.default.copyItem(at: TestPaths.product("authkit"), to: bin.appendingPathComponent("authkit"))
            }
            for path in [home.path, home.path + "/.local", bin.path, bin.path + "/authkit"] { chown(path, uid, gid) }
            chmod(home.path, 0o700)
            self.home = home
            do { server = try await offThePool { try TestSSHServer(home: home.path) } } catch {
                try? FileManager.default.removeItem(at: root)
                throw error
            }
        }

        func stop() {
            server.stop()
            try? FileManager.default.removeItem(at: root)
        }

        /// `authkit ssh --group GROUP` running `command` there. `recorded`: the words the leak
        /// check sees (`["token"]`: a run that prints a token).
        func ssh(_ world: CLIHarness, group: String, _ command: String, recorded: [String]? = nil) async throws -> ProcessResult {
            let arguments = ["ssh", "--group", group, "--"] + server.clientOptions + [server.destination, command]
            let result = try await offThePool {
                try ProcessRunner.run(TestPaths.product("authkit"), arguments, environment: world.environment, timeout: 60)
            }
            world.recordExternal("authkit", recorded ?? ["ssh", "--group", group, command], result)
            return result
        }
    }

    @Test func theRemoteAccountUsesTheForwardedGroupWithNoFlags() async throws {
        if let reason = TestSSHServer.unavailableReason {
            Issue.record(Comment(rawValue: "cannot run sshd: \(reason)"))
            return
        }
        let git = try await GitCredentialTests.GitWorld.start()
        defer { git.stop() }
        let world = git.world
        #expect(world.group != Profile.defaultGroup, "the sign-in is in a group of its own")
        let remote = try await RemoteAccount(withAuthKit: true)
        defer { remote.stop() }
        let home = remote.home.path
        func ssh(_ command: String, recorded: [String]? = nil) async throws -> ProcessResult {
            try await remote.ssh(world, group: world.group, command, recorded: recorded)
        }

        let hostToken = try await world.authkit(["token", "--group", world.group])
        let token = try await ssh("authkit token", recorded: ["token"])
        #expect(token.status == 0 && token.stdout == hostToken.stdout, "no --group on the remote: the forward's group: \(token.stderr)")
        #expect(token.stderr.isEmpty, "\(token.stderr)")

        let setup = try await ssh("authkit setup git --host \(git.url)")
        #expect(setup.status == 0, "\(setup.stderr)")
        let clone = try await ssh(
            "GIT_TERMINAL_PROMPT=0 git clone -q \(git.url)/repo.git \(home)/clone && test -f \(home)/clone/README && echo cloned")
        #expect(
            clone.status == 0 && clone.stdout == "cloned\n", "git on the remote host clones with no flags: \(clone.stdout)\(clone.stderr)")

        // setup fills in the entry it wrote, rather than refusing it.
        let update = try await ssh("authkit setup git --host \(git.url) --group \(world.group) && cat \(home)/.config/authkit/config")
        #expect(update.status == 0 && update.stderr.contains("updated [credential \"\(git.url)\"]"), "\(update.stderr)")
        #expect(
            update.stdout.components(separatedBy: "[credential").count == 2 && update.stdout.contains("group = \(world.group)"),
            "one section, with the group: \(update.stdout)")

        let other = try await ssh("authkit token --group com.example.other")
        #expect(
            other.status == 10 && other.stderr.contains("does not serve the group") && other.stderr.contains("com.example.other")
                && other.stderr.contains("it serves \(world.group)") && other.stderr.contains("--group \(world.group)"),
            "the refusal names what is served and how to ask for it: \(other.stderr)")

        // A forward of a group nobody signed in to: the remote is told to sign in on the laptop.
        let nobody = try await remote.ssh(world, group: "com.example.nobody", "authkit token")
        #expect(nobody.status == 1 && nobody.stdout.isEmpty, "\(nobody.stderr)")
        #expect(
            nobody.stderr.contains("sign in on the machine that forwarded it (`authkit login --group com.example.nobody` there), not here"),
            "\(nobody.stderr)")
        try await world.assertNoSecretsLeaked()
    }

    /// No authkit on the remote PATH nor in `~/.local/bin`: the failed command is followed by
    /// what to do.
    @Test func noAuthKitOnTheRemoteSaysWhereToPutIt() async throws {
        if let reason = TestSSHServer.unavailableReason {
            Issue.record(Comment(rawValue: "cannot run sshd: \(reason)"))
            return
        }
        let world = try await CLIHarness.start()
        defer { world.stop() }
        try await world.signIn(user: "ada")
        let remote = try await RemoteAccount(withAuthKit: false)
        defer { remote.stop() }
        let missing = try await remote.ssh(world, group: world.group, "authkit token")
        #expect(missing.status == 127, "\(missing.stderr)")
        #expect(
            missing.stderr.contains("there is no authkit on the remote host's PATH or in ~/.local/bin")
                && missing.stderr.contains("mkdir -p .local/bin && scp"), "says what to do: \(missing.stderr)")
        let fine = try await remote.ssh(world, group: world.group, "true")
        #expect(fine.status == 0 && fine.stderr.isEmpty, "a command that works hears nothing of it: \(fine.stderr)")
    }
}
