import ArgumentParser
import AuthKit

#if canImport(Glibc)
import Glibc
#endif

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `authkit credential git|docker|kubectl`: the shared sign-in through each client's own
/// credential plug-in protocol.
struct CredentialCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "credential",
        abstract: "Answer git's, docker's or kubectl's credential plug-in protocol with the shared sign-in.",
        discussion: """
            Each client runs authkit as its plug-in and gets a token of the shared sign-in, \
            refreshed once for all tools when needed. Standard output carries the client's \
            answer and nothing else; errors are one line on standard error. A plug-in never \
            reads the terminal, never opens a browser, never starts a sign-in, and never \
            deletes or revokes the sign-in, whatever the client asks. Set them up with \
            `authkit setup git|docker|kubectl`.
            """,
        subcommands: [CredentialGitCommand.self, CredentialDockerCommand.self, CredentialKubectlCommand.self]
    )
}

/// Options every credential plug-in takes.
struct CredentialOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The profile whose sign-in to use (default: as the config file maps the host).", valueName: "name"))
    var profile: String?

    @Option(help: ArgumentHelp("The group whose sign-in to use.", valueName: "name"))
    var group: String?

    @Option(help: ArgumentHelp("The account, when the group holds several.", valueName: "name"))
    var account: String?

    @Option(name: .customLong("scope"), help: ArgumentHelp("A scope the token must carry (repeatable).", valueName: "scope"))
    var scopes: [String] = []

    @Option(help: ArgumentHelp("Where tokens live: secret-service, kernel-keyring or plain-file.", valueName: "store"))
    var storage: StorageChoice?

    @Flag(help: "The same as --storage plain-file.")
    var insecureStorage = false

    /// True when the command line names the sign-in (then every host is served).
    var namesSignIn: Bool { profile != nil || group != nil }

    func validate() throws {
        if insecureStorage, let storage, storage != .plainFile {
            throw ValidationError("--insecure-storage means --storage plain-file; it contradicts --storage \(storage.rawValue)")
        }
    }

    /// The target the flags describe.
    func target(entry: String, username: String = "oauth2") -> CredentialTarget {
        CredentialTarget(entry: entry, profile: profile, group: group, account: account, scopes: scopes.isEmpty ? nil : scopes, username: username)
    }
}

/// What a plug-in was asked, however it was parsed (ArgumentParser or ``CredentialFastPath``).
struct CredentialFlags: Equatable {
    var profile: String?
    var group: String?
    var account: String?
    var scopes: [String] = []
    var insecureStorage = false
    var storage: StorageChoice?
    var minTTL = 300
    var username: String?
    var tokenType: CredentialKubectlCommand.TokenType = .accessToken
    var action = ""

    init() {}

    init(_ options: CredentialOptions, minTTL: Int, action: String = "", username: String? = nil) {
        profile = options.profile
        group = options.group
        account = options.account
        scopes = options.scopes
        insecureStorage = options.insecureStorage
        storage = options.storage
        self.minTTL = minTTL
        self.action = action
        self.username = username
    }

    /// True when the command line names the sign-in (then every host is served).
    var namesSignIn: Bool { profile != nil || group != nil }

    func target(entry: String, username: String = "oauth2") -> CredentialTarget {
        CredentialTarget(entry: entry, profile: profile, group: group, account: account, scopes: scopes.isEmpty ? nil : scopes, username: username)
    }
}

/// `authkit credential git|docker|kubectl` (and `docker-credential-authkit`) without
/// ArgumentParser's start-up cost, as ``TokenFastPath`` does for `token`: clients run these in
/// every git fetch, docker pull and kubectl call. Anything unusual (help, an unknown flag, a
/// malformed value) returns nil, and ArgumentParser parses as usual.
enum CredentialFastPath {
    static func parse(_ arguments: [String]) -> (client: String, flags: CredentialFlags)? {
        guard arguments.count >= 2, arguments[0] == "credential", ["git", "docker", "kubectl"].contains(arguments[1]) else { return nil }
        let client = arguments[1]
        var flags = CredentialFlags()
        var scanner = FastPathScanner(arguments: arguments, index: 2)
        var options = SharedFastPathOptions(minTTL: flags.minTTL)
        var action: String?
        while scanner.index < arguments.count {
            let argument = arguments[scanner.index]
            if !argument.hasPrefix("-") {
                guard action == nil, client != "kubectl" else { return nil }
                action = argument
                scanner.index += 1
                continue
            }
            switch scanner.shared(argument, into: &options) {
            case .handled: break
            case .malformed: return nil
            case .notShared:
                let name = FastPathScanner.name(of: argument)
                switch name {
                case "--username" where client == "git":
                    guard let text = scanner.value(argument, name), flags.username == nil else { return nil }
                    flags.username = text
                case "--token-type" where client == "kubectl":
                    guard let text = scanner.value(argument, name), let type = CredentialKubectlCommand.TokenType(rawValue: text) else { return nil }
                    flags.tokenType = type
                default:
                    return nil
                }
            }
            scanner.index += 1
        }
        (flags.profile, flags.group, flags.account, flags.scopes) = (options.profile, options.group, options.account, options.scopes)
        (flags.minTTL, flags.insecureStorage, flags.storage) = (options.minTTL, options.insecureStorage, options.storage)
        if client == "kubectl" {
            if flags.tokenType == .idToken && !flags.scopes.isEmpty { return nil }
        } else {
            guard let action else { return nil }
            flags.action = action
        }
        return (client, flags)
    }

    /// Runs what ``parse(_:)`` found.
    static func run(client: String, flags: CredentialFlags) async throws {
        switch client {
        case "git": try await CredentialGitCommand.serve(flags)
        case "docker": try await CredentialDockerCommand.serve(flags)
        default: try await CredentialKubectlCommand.serve(flags)
        }
    }
}

/// What every plug-in shares: the config's mapping, one token from the shared sign-in, bounded
/// standard input, and errors as one line on standard error.
enum CredentialPlugin {
    /// Everything a credential client could send in one request is far below this.
    static let maxInputBytes = 64 * 1024
    static let maxLineBytes = 16 * 1024

    struct Failure: Error {
        var message: String
        var code: ExitCode
    }

    /// The config file (only the mapping is needed; a broken file is an error).
    static func config() throws(Failure) -> ConfigFile {
        do {
            return try ConfigFile.load(environment: ProcessInfo.processInfo.environment)
        } catch {
            throw Failure(message: "authkit: \(error)", code: ExitStatus.usage)
        }
    }

    /// A valid access token for `target`, at least `minTTL` seconds left.
    static func accessToken(for target: CredentialTarget, insecureStorage: Bool, storage: StorageChoice? = nil, minTTL: Int) async throws(Failure) -> AccessToken {
        let settings = SessionSettings(profile: target.profile, group: target.group, insecureStorage: insecureStorage, storage: storage)
        do throws(AuthKitError) {
            let profile = try settings.resolveProfile()
            let session = try settings.session(for: profile)
            return try await session.validAccessToken(account: target.account, minimumLifetime: .seconds(minTTL), scopes: target.scopes)
        } catch {
            throw failure(error, settings: settings)
        }
    }

    /// A verified id_token for `target`.
    static func idToken(for target: CredentialTarget, insecureStorage: Bool, storage: StorageChoice? = nil, minTTL: Int) async throws(Failure) -> IDToken {
        let settings = SessionSettings(profile: target.profile, group: target.group, insecureStorage: insecureStorage, storage: storage)
        do throws(AuthKitError) {
            let profile = try settings.resolveProfile()
            return try await settings.session(for: profile).validIDToken(account: target.account, minimumLifetime: .seconds(minTTL))
        } catch {
            throw failure(error, settings: settings)
        }
    }

    /// Marks a token a server rejected stale for every tool (never deletes, never revokes).
    static func markRejected(_ value: String, for target: CredentialTarget, insecureStorage: Bool, storage: StorageChoice? = nil) async throws(Failure) {
        let settings = SessionSettings(profile: target.profile, group: target.group, insecureStorage: insecureStorage, storage: storage)
        do throws(AuthKitError) {
            let profile = try settings.resolveProfile()
            try await settings.session(for: profile).markRejected(accessToken: value, account: target.account)
        } catch {
            throw failure(error, settings: settings)
        }
    }

    static func failure(_ error: AuthKitError, settings: SessionSettings) -> Failure {
        if error.category == .loginNeeded {
            return Failure(message: "authkit: \(error); run `\(loginCommand(settings))` to sign in", code: ExitStatus.loginNeeded)
        }
        return Failure(message: "authkit: \(error)", code: exitCode(for: error))
    }

    /// Standard input, bounded: a client sends a few short lines at most. NUL bytes, a line
    /// longer than 16 KiB or more than 64 KiB in all are refused.
    static func readInput() throws(Failure) -> String {
        // A plug-in never reads the terminal: run by hand, it says what it expects instead.
        guard isatty(0) != 1 else {
            throw Failure(message: "authkit: the client's request is read from standard input, which is a terminal here; pipe it in", code: ExitStatus.usage)
        }
        let bytes: [UInt8]
        do throws(InputFile.Failure) {
            bytes = try InputFile.read(descriptor: 0, limit: maxInputBytes)
        } catch {
            throw Failure(message: "authkit: cannot read standard input: \(error)", code: ExitStatus.usage)
        }
        guard bytes.count <= maxInputBytes else {
            throw Failure(message: "authkit: the request on standard input is longer than \(maxInputBytes / 1024) KiB", code: ExitStatus.usage)
        }
        guard !bytes.contains(0) else { throw Failure(message: "authkit: the request on standard input contains a NUL byte", code: ExitStatus.usage) }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw Failure(message: "authkit: the request on standard input is not UTF-8 text", code: ExitStatus.usage)
        }
        if text.split(separator: "\n", omittingEmptySubsequences: false).contains(where: { $0.utf8.count > maxLineBytes }) {
            throw Failure(message: "authkit: a line of the request is longer than \(maxLineBytes / 1024) KiB", code: ExitStatus.usage)
        }
        return text
    }

    /// Runs `body`; a failure is its one line on standard error and its exit code, with
    /// nothing on standard output.
    static func run(_ body: () async throws(Failure) -> Void) async throws {
        do {
            try await body()
        } catch {
            if !error.message.isEmpty { Terminal.printError(error.message) }
            throw error.code
        }
    }
}
