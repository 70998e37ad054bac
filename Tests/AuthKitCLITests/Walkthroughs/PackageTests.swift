import Foundation
import TestSupport
import Testing

/// The .deb and the tarball of `scripts/package`, each unpacked into an empty folder as a user gets them (`dpkg-deb -x`, `tar`)
/// — the binary names its commit, the git and docker plug-in links answer from the test provider's sign-in, lintian passes,
/// `man -l` renders every page without a warning, and bash-completion completes `authkit cre` through the packaged file.
/// `scripts/test` builds the package once per commit and names its folder in `AUTHKIT_TEST_PACKAGE`; without it the suite
/// is skipped, saying why.
@Suite(.enabled(if: PackageUnderTest.folder != nil, PackageUnderTest.notBuilt))
struct PackageTests {
    /// A private folder holding the .deb's files (`dpkg-deb -x`), removed at the end.
    static func unpackDeb(_ package: PackageUnderTest) throws -> URL {
        let root = try TestPaths.makeTemporaryDirectory(prefix: "authkit-deb")
        let result = try ProcessRunner.run(package.tool("dpkg-deb"), ["-x", package.deb.path, root.path], timeout: 120)
        try #require(result.status == 0, "dpkg-deb -x: \(result.stderr)")
        return root
    }

    /// A private folder holding the tarball's one top folder, whose path is returned.
    static func unpackTarball(_ package: PackageUnderTest) throws -> (scratch: URL, top: URL) {
        let scratch = try TestPaths.makeTemporaryDirectory(prefix: "authkit-tar")
        let result = try ProcessRunner.run(package.tool("tar"), ["-xzf", package.tarball.path, "-C", scratch.path], timeout: 120)
        try #require(result.status == 0, "tar: \(result.stderr)")
        let top = try FileManager.default.contentsOfDirectory(atPath: scratch.path)
        try #require(top.count == 1, "the tarball holds one folder, not \(top)")
        return (scratch, scratch.appendingPathComponent(top[0]))
    }

    @Test func theDebianPackageRunsFromAnEmptyFolder() async throws {
        let package = try #require(PackageUnderTest.current)
        let root = try Self.unpackDeb(package)
        defer { try? FileManager.default.removeItem(at: root) }
        try await Self.checkBinaryAndLinks(bin: root.appendingPathComponent("usr/bin"), package: package)

        // Everything in its place, the units pointing at the installed binary.
        let expected = [
            "usr/share/man/man1/authkit.1.gz", "usr/share/man/man1/authkit.credential.git.1.gz",
            "usr/share/bash-completion/completions/authkit", "usr/share/zsh/vendor-completions/_authkit",
            "usr/share/fish/vendor_completions.d/authkit.fish", "usr/lib/systemd/user/authkit-agent.socket",
            "usr/share/doc/authkit/README.md.gz", "usr/share/doc/authkit/SECURITY.md.gz", "usr/share/doc/authkit/copyright",
            "usr/share/doc/authkit/changelog.Debian.gz", "usr/share/doc/authkit/README.Debian",
            "usr/share/doc/authkit/docs/agent.md.gz", "usr/share/doc/authkit/docs/agent-protocol.md.gz",
        ]
        for path in expected {
            #expect(FileManager.default.fileExists(atPath: root.appendingPathComponent(path).path), "\(path) is missing")
        }
        let service = try String(contentsOf: root.appendingPathComponent("usr/lib/systemd/user/authkit-agent.service"), encoding: .utf8)
        #expect(service.contains("\nExecStart=/usr/bin/authkit agent run\n"), "\(service)")

        // Depends: what the binary links (libc) and what it dlopen()s; a Secret Service recommended.
        let fields = try await ProcessRunner.run(package.tool("dpkg-deb"), ["-f", package.deb.path, "Depends", "Recommends"], timeout: 60)
        #expect(fields.status == 0, "\(fields.stderr)")
        for name in ["libc6", "libssl3", "libcurl4", "libsecret-1-0", "gnome-keyring"] {
            #expect(fields.stdout.contains(name), "\(name) missing from \(fields.stdout)")
        }
    }

    @Test func theTarballRunsFromAnEmptyFolder() async throws {
        let package = try #require(PackageUnderTest.current)
        let (scratch, top) = try Self.unpackTarball(package)
        defer { try? FileManager.default.removeItem(at: scratch) }
        #expect(top.lastPathComponent == package.tarball.lastPathComponent.replacingOccurrences(of: ".tar.gz", with: ""))
        try await Self.checkBinaryAndLinks(bin: top.appendingPathComponent("bin"), package: package)
        for path in [
            "share/man/man1/authkit.1.gz", "share/bash-completion/completions/authkit", "share/doc/authkit/LICENSE",
            "share/doc/authkit/docs/agent.md",
        ] {
            #expect(FileManager.default.fileExists(atPath: top.appendingPathComponent(path).path), "\(path) is missing")
        }
    }

    /// `--version` names the commit; every link `credential --list-links` names is there (git's
    /// and docker's pointing at the lean client), and git's and docker's answer their clients
    /// from the shared sign-in, without an agent; what the lean client hands over reaches authkit.
    static func checkBinaryAndLinks(bin: URL, package: PackageUnderTest) async throws {
        let authkit = bin.appendingPathComponent("authkit")
        let version = try await ProcessRunner.run(authkit, ["--version"], timeout: 30)
        #expect(version.status == 0 && version.stdout.contains("(commit ") && !version.stdout.contains("unknown"), "\(version.stdout)")
        let links = try await ProcessRunner.run(authkit, ["credential", "--list-links"], timeout: 30)
        let lines = links.stdout.split(separator: "\n").map { $0.split(separator: " ").map(String.init) }
        let names = lines.compactMap(\.first)
        #expect(names.contains("git-credential-authkit") && names.contains("docker-credential-authkit"), "\(links.stdout)")
        // The plug-ins the lean client answers run it, from authkit's own folder beside bin/
        // (where it finds the authkit it hands the rest to); the others run authkit.
        let lean = Set(lines.filter { $0.count == 3 && $0[2] == "lean" }.map { $0[0] })
        #expect(lean == ["git-credential-authkit", "docker-credential-authkit", "cargo-credential-authkit"], "\(links.stdout)")
        for name in names {
            let target = try? FileManager.default.destinationOfSymbolicLink(atPath: bin.appendingPathComponent(name).path)
            #expect(target == (lean.contains(name) ? "../lib/authkit/authkit-lean" : "authkit"), "\(name) → \(target ?? "nothing")")
        }
        let folder = bin.deletingLastPathComponent().appendingPathComponent("lib/authkit")
        #expect(FileManager.default.isExecutableFile(atPath: folder.appendingPathComponent("authkit-lean").path))
        #expect(
            try FileManager.default.destinationOfSymbolicLink(atPath: folder.appendingPathComponent("authkit").path) == "../../bin/authkit")

        let world = try await CLIHarness.start()
        defer { world.stop() }
        try await world.signIn(user: "ada")
        try FileManager.default.createDirectory(at: world.configDirectory, withIntermediateDirectories: true)
        try """
        [credential "https://git.example"]
        group = \(world.group)
        username = ada

        [registry "registry.example.com"]
        group = \(world.group)
        username = ada

        """.write(to: world.configDirectory.appendingPathComponent("config"), atomically: false, encoding: .utf8)
        let git = try await ProcessRunner.run(
            bin.appendingPathComponent("git-credential-authkit"), ["get"], environment: world.environment,
            stdin: "protocol=https\nhost=git.example\n\n", timeout: 30)
        world.recordExternal("authkit", ["credential", "git", "get"], git)
        #expect(git.status == 0 && git.stdout.contains("username=ada\n") && git.stdout.contains("password="), "\(git.stderr)")
        let docker = try await ProcessRunner.run(
            bin.appendingPathComponent("docker-credential-authkit"), ["get"], environment: world.environment,
            stdin: "https://registry.example.com/v2/\n", timeout: 30)
        world.recordExternal("authkit", ["credential", "docker", "get"], docker)
        let answer = try JSONSerialization.jsonObject(with: Data(docker.stdout.utf8)) as? [String: String]
        #expect(docker.status == 0 && answer?["Username"] == "ada" && answer?["Secret"]?.isEmpty == false, "\(docker.stderr)")
        let cargo = try await ProcessRunner.run(
            bin.appendingPathComponent("cargo-credential-authkit"), ["--cargo-plugin"], environment: world.environment,
            stdin: #"{"v":1,"kind":"get","operation":"read","registry":{"index-url":"sparse+https://git.example/index/"},"args":[]}"#
                + "\n",
            timeout: 30)
        world.recordExternal("cargo-credential-authkit", ["--cargo-plugin"], cargo)
        #expect(cargo.status == 0 && cargo.stdout.hasPrefix(#"{"v":[1]}"# + "\n{\"Ok\":"), "\(cargo.stdout) \(cargo.stderr)")
        // What the lean client does not answer reaches the packaged authkit: docker's `list`.
        let list = try await ProcessRunner.run(
            bin.appendingPathComponent("docker-credential-authkit"), ["list"], environment: world.environment, timeout: 30)
        world.recordExternal("authkit", ["credential", "docker", "list"], list)

        // setup keeps the package's links and points new ones (and git's helper) at the lean client.
        let dockerConfig = world.scratch.appendingPathComponent("docker-config").path
        let kept = try await ProcessRunner.run(
            authkit, ["setup", "docker", "--registry", "r.example", "--link-dir", bin.path, "--print"],
            environment: world.environment.merging(["DOCKER_CONFIG": dockerConfig]) { $1 }, timeout: 30)
        #expect(kept.status == 0 && kept.stdout.contains("already leads to this authkit: kept"), "\(kept.stdout) \(kept.stderr)")
        let elsewhere = world.scratch.appendingPathComponent("link-dir").path
        let made = try await ProcessRunner.run(
            authkit, ["setup", "docker", "--registry", "r.example", "--link-dir", elsewhere, "--print"],
            environment: world.environment.merging(["DOCKER_CONFIG": dockerConfig]) { $1 }, timeout: 30)
        let leanPath = folder.appendingPathComponent("authkit-lean").path
        #expect(made.status == 0 && made.stdout.contains("ln -s \(leanPath) "), "\(made.stdout) \(made.stderr)")
        let gitSetup = try await ProcessRunner.run(
            authkit, ["setup", "git", "--host", "https://other.example", "--group", world.group, "--print"], environment: world.environment,
            timeout: 30)
        #expect(gitSetup.status == 0 && gitSetup.stdout.contains("!\(leanPath) credential git"), "\(gitSetup.stdout) \(gitSetup.stderr)")
        let cargoSetup = try await ProcessRunner.run(
            authkit,
            ["setup", "cargo", "--registry", "r", "--index", "sparse+https://cargo.example/index/", "--group", world.group, "--print"],
            environment: world.environment.merging(["CARGO_HOME": world.scratch.appendingPathComponent("cargo-home").path]) { $1 },
            timeout: 30)
        #expect(
            cargoSetup.status == 0 && cargoSetup.stdout.contains(#"credential-provider = ["\#(leanPath)", "credential", "cargo"]"#),
            "\(cargoSetup.stdout) \(cargoSetup.stderr)")
        // kubectl's exec section names the lean client for an access token, authkit for an id_token.
        do {
            let kubectl = try #require(KubectlCredentialTests.kubectls().first, "no kubectl: run ./scripts/bootstrap")
            let kubeconfig = world.scratch.appendingPathComponent("kubeconfig")
            try """
            apiVersion: v1
            kind: Config
            clusters:
            - cluster:
                server: https://127.0.0.1:9
              name: c
            contexts:
            - context:
                cluster: c
                user: ada
              name: c
            current-context: c
            users:
            - name: ada
              user: {}

            """.write(to: kubeconfig, atomically: false, encoding: .utf8)
            var environment = world.environment
            environment["KUBECONFIG"] = kubeconfig.path
            environment["PATH"] = kubectl.deletingLastPathComponent().path + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
            for (type, command) in [("access-token", leanPath), ("id-token", authkit.path)] {
                let setup = try await ProcessRunner.run(
                    authkit, ["setup", "kubectl", "--context", "c", "--group", world.group, "--token-type", type, "--print"],
                    environment: environment, timeout: 60)
                #expect(setup.status == 0 && setup.stdout.contains("  command: \(command)\n"), "\(type): \(setup.stdout) \(setup.stderr)")
            }
        }

        // The agent counts the installed lean client as authkit: the asker is never it.
        let socket = world.scratch.appendingPathComponent("packaged-agent.sock").path
        let agent = try TestProcess(authkit, ["agent", "run", "--socket", socket], environment: world.environment)
        defer {
            agent.send(signal: SIGTERM)
            agent.wait(timeout: 10)
        }
        try await until("the packaged agent listens", timeout: .seconds(30)) { FileManager.default.fileExists(atPath: socket) }
        let viaAgent = try await ProcessRunner.run(
            bin.appendingPathComponent("git-credential-authkit"), ["get"],
            environment: world.environment.merging(["AUTHKIT_AGENT_SOCK": socket]) { $1 },
            stdin: "protocol=https\nhost=git.example\n\n", timeout: 30)
        world.recordExternal("authkit", ["credential", "git", "get"], viaAgent)
        #expect(viaAgent.status == 0 && viaAgent.stdout.contains("password="), "\(viaAgent.stderr)")
        let log = try await ProcessRunner.run(
            authkit, ["agent", "log", "--json", "--group", world.group, "--socket", socket], environment: world.environment, timeout: 30)
        #expect(log.status == 0 && log.stdout.contains("\"asker\"") && !log.stdout.contains("authkit-lean"), "\(log.stdout)")
        let expected = try await ProcessRunner.run(authkit, ["credential", "docker", "list"], environment: world.environment, timeout: 30)
        #expect(list.status == 0 && list.stdout == expected.stdout && list.stdout.contains("registry.example.com"), "\(list.stderr)")
        try await world.assertNoSecretsLeaked()
    }

    /// lintian finds no error and no warning (its whole output goes to the test log).
    @Test(.timeLimit(.minutes(10))) func lintianIsClean() async throws {
        let package = try #require(PackageUnderTest.current)
        let lintian = try #require(package.optionalTool("lintian"), "no lintian: ./scripts/bootstrap installs it")
        // lintian's man page check runs man-db, which leaves a database file (mldbm-elf-…) in
        // TMPDIR: a folder of the test's own, removed after it.
        let scratch = try TestPaths.makeTemporaryDirectory(prefix: "authkit-lintian")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let result = try await ProcessRunner.run(
            lintian, ["--fail-on", "error,warning", "--display-info", package.deb.path], extraEnvironment: ["TMPDIR": scratch.path],
            timeout: 600)
        print("lintian --fail-on error,warning --display-info \(package.deb.lastPathComponent) (exit \(result.status)):")
        print(result.stdout.isEmpty ? "(no output)" : result.stdout, terminator: "")
        #expect(result.status == 0, "lintian: \(result.stdout)\(result.stderr)")
    }

    /// Every page, the links' too, renders with groff's warnings on and none printed.
    @Test func everyManPageRendersWithoutWarnings() async throws {
        let package = try #require(PackageUnderTest.current)
        let root = try Self.unpackDeb(package)
        defer { try? FileManager.default.removeItem(at: root) }
        let folder = root.appendingPathComponent("usr/share/man/man1")
        let pages = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
        #expect(pages.contains("authkit.1.gz") && pages.count > 20, "\(pages)")
        let man = try #require(package.optionalTool("man"), "no man: ./scripts/bootstrap installs man-db")
        // man-db leaves a database file (mldbm-elf-…) in TMPDIR: it goes with the unpacked tree.
        let scratch = root.appendingPathComponent("tmp")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        for page in pages {
            let result = try await ProcessRunner.run(
                man, ["--warnings", "-l", folder.appendingPathComponent(page).path],
                extraEnvironment: ["MANWIDTH": "80", "LC_ALL": "C.UTF-8", "MANPAGER": "cat", "PAGER": "cat", "TMPDIR": scratch.path],
                timeout: 60)
            #expect(result.status == 0 && result.stderr.isEmpty && result.stdout.contains("NAME"), "\(page): \(result.stderr)")
            // EXIT STATUS is authkit's table (`help exit-codes`), not generate-manual's ">0 if an error occurs".
            #expect(
                result.stdout.contains("not signed in, or the sign-in needs a new login") && !result.stdout.contains("if an error occurs"),
                "\(page): no exit-status table")
        }
        // The overview names every store.
        let overview = try await ProcessRunner.run(
            man, ["-l", folder.appendingPathComponent("authkit.1.gz").path],
            extraEnvironment: ["MANWIDTH": "80", "LC_ALL": "C.UTF-8", "MANPAGER": "cat", "PAGER": "cat", "TMPDIR": scratch.path],
            timeout: 60)
        for store in ["secret-service", "kernel-keyring", "encrypted-file", "plain-file"] {
            #expect(overview.stdout.contains(store), "man authkit does not name \(store)")
        }
    }

    /// bash-completion's loader finds the packaged file (through XDG_DATA_DIRS, as it finds
    /// /usr/share's), and `authkit cre<TAB>` completes to `credential`.
    @Test func bashCompletesThroughThePackagedFile() async throws {
        let package = try #require(PackageUnderTest.current)
        let loader = "/usr/share/bash-completion/bash_completion"
        try #require(FileManager.default.fileExists(atPath: loader), "no bash-completion: ./scripts/bootstrap installs it")
        let root = try Self.unpackDeb(package)
        defer { try? FileManager.default.removeItem(at: root) }
        let script = """
            source \(loader)
            complete -r authkit 2>/dev/null || true
            _completion_loader authkit || __load_completion authkit
            function=$(complete -p authkit | sed -n 's/.*-F \\([^ ]*\\) .*/\\1/p')
            [[ -n $function ]] || { echo "bash-completion loaded nothing for authkit" >&2; exit 1; }
            COMP_LINE='authkit cre' COMP_POINT=11 COMP_WORDS=(authkit cre) COMP_CWORD=1
            "$function" authkit cre authkit
            printf '%s\\n' "${COMPREPLY[@]}"
            """
        let usr = root.appendingPathComponent("usr")
        let result = try await ProcessRunner.run(
            package.tool("bash"), ["--norc", "--noprofile", "-c", script],
            extraEnvironment: [
                "XDG_DATA_DIRS": usr.appendingPathComponent("share").path,
                "BASH_COMPLETION_USER_DIR": root.appendingPathComponent("none").path,
                "PATH": usr.appendingPathComponent("bin").path + ":/usr/bin:/bin",
            ], timeout: 60)
        #expect(result.status == 0 && result.stdout.split(separator: "\n").contains("credential"), "\(result.stdout) \(result.stderr)")
    }
}

/// The package a run tests: `AUTHKIT_TEST_PACKAGE`'s folder, holding one .deb and one tarball.
struct PackageUnderTest {
    let deb: URL
    let tarball: URL

    static let notBuilt: Comment =
        "AUTHKIT_TEST_PACKAGE is not set: ./scripts/test sets it after scripts/package (which needs dpkg-dev and lintian)"

    static let folder: URL? = ProcessInfo.processInfo.environment["AUTHKIT_TEST_PACKAGE"].flatMap {
        $0.isEmpty ? nil : URL(fileURLWithPath: $0)
    }

    static var current: PackageUnderTest? {
        guard let folder, let names = try? FileManager.default.contentsOfDirectory(atPath: folder.path) else { return nil }
        let debs = names.filter { $0.hasPrefix("authkit_") && $0.hasSuffix("_amd64.deb") }
        let tarballs = names.filter { $0.hasPrefix("authkit-") && $0.hasSuffix("-linux-x86_64.tar.gz") }
        guard debs.count == 1, tarballs.count == 1 else { return nil }
        return PackageUnderTest(deb: folder.appendingPathComponent(debs[0]), tarball: folder.appendingPathComponent(tarballs[0]))
    }

    func optionalTool(_ name: String) -> URL? {
        for directory in ["/usr/bin", "/bin", "/usr/sbin"] {
            let candidate = URL(fileURLWithPath: directory).appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        return nil
    }

    func tool(_ name: String) throws -> URL {
        try #require(optionalTool(name), "\(name) is not installed: ./scripts/bootstrap installs it")
    }
}
