import ArgumentParser
import AuthKit
import AuthKitCore

#if canImport(Glibc)
import Glibc
#endif

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What every plug-in shares: the config's mapping, one token from the shared sign-in, bounded
/// standard input, and errors as one line on standard error.
enum CredentialPlugin {
    /// (CredentialInput's limits.)
    static let maxInputBytes = CredentialInput.maximumBytes
    static let maxLineBytes = CredentialInput.maximumLineBytes

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

    /// The sign-in `target` names, in the store the command line chose.
    static func selector(_ target: CredentialTarget, _ flags: CredentialFlags) -> SignInSelector {
        SignInSelector(
            profile: target.profile, group: target.group, account: target.account,
            insecureStorage: flags.selector.insecureStorage,
            // The command line's store wins (--insecure-storage is one); else the mapping's.
            storage: flags.selector.storage
                ?? (flags.selector.insecureStorage ? nil : target.storage.flatMap(StorageChoice.init(rawValue:))))
    }

    /// A valid access token for `target`, at least `minTTL` seconds left.
    ///
    /// Run by the fast path on the main thread (``serve(_:_:)`` and the adapters run on their
    /// caller's executor), it first asks the agent right there, before any other thread
    /// starts — `authkit token`'s way (``TokenRequest/runThroughAgentNow(_:)``); kubectl runs
    /// its plug-in twice per command, so this is most of what the plug-in costs it.
    nonisolated(nonsending) static func accessToken(for target: CredentialTarget, _ flags: CredentialFlags) async throws(Failure)
        -> AccessToken
    {
        let settings = selector(target, flags), minTTL = flags.minTTL
        do throws(AuthKitError) {
            let profile = try settings.resolveProfile()
            if MainThread.isCurrent,
                let answer = AgentRoute.accessTokenNow(
                    group: profile.group, storage: profile.storage, account: target.account, scopes: target.scopes,
                    resources: target.resources, minimumLifetime: .seconds(minTTL), environment: settings.environment)
            {
                return try answer.get()
            }
            let session = try settings.session(for: profile)
            return try await session.validAccessToken(
                account: target.account, minimumLifetime: .seconds(minTTL), scopes: target.scopes, resources: target.resources)
        } catch {
            throw failure(error, settings: settings)
        }
    }

    /// A verified id_token for `target`. `warn`: the configuration's warnings on standard
    /// error (off for a client that reads standard error as part of the answer).
    static func idToken(for target: CredentialTarget, _ flags: CredentialFlags, warn: Bool = true) async throws(Failure) -> IDToken {
        let settings = selector(target, flags), minTTL = flags.minTTL
        do throws(AuthKitError) {
            let profile = try settings.resolveProfile(warn: warn)
            return try await settings.session(for: profile).validIDToken(account: target.account, minimumLifetime: .seconds(minTTL))
        } catch {
            throw failure(error, settings: settings)
        }
    }

    /// Marks a token a server rejected stale for every tool (never deletes, never revokes).
    static func markRejected(_ value: String, for target: CredentialTarget, _ flags: CredentialFlags) async throws(Failure) {
        let settings = selector(target, flags)
        do throws(AuthKitError) {
            let profile = try settings.resolveProfile()
            try await settings.session(for: profile).markRejected(accessToken: value, account: target.account)
        } catch {
            throw failure(error, settings: settings)
        }
    }

    static func failure(_ error: AuthKitError, settings: SignInSelector) -> Failure {
        if error.category == .loginNeeded {
            return Failure(message: "authkit: \(error); " + signInHint(settings), code: ExitStatus.loginNeeded)
        }
        return Failure(message: "authkit: \(error)", code: exitCode(for: error))
    }

    /// Standard input, bounded: a client sends a few short lines at most. NUL bytes, a line
    /// longer than 16 KiB or more than 64 KiB in all are refused.
    static func readInput() throws(Failure) -> String {
        // A plug-in never reads the terminal: run by hand, it says what it expects instead.
        guard isatty(0) != 1 else {
            throw Failure(
                message: "authkit: the client's request is read from standard input, which is a terminal here; pipe it in",
                code: ExitStatus.usage)
        }
        let bytes: [UInt8]
        do throws(InputFile.Failure) {
            bytes = try InputFile.read(descriptor: 0, limit: maxInputBytes)
        } catch {
            throw Failure(message: "authkit: cannot read standard input: \(error)", code: ExitStatus.usage)
        }
        switch CredentialInput.text(bytes) {
        case .success(let text): return text
        case .failure(.tooLong):
            throw Failure(
                message: "authkit: the request on standard input is longer than \(maxInputBytes / 1024) KiB", code: ExitStatus.usage)
        case .failure(.nul):
            throw Failure(message: "authkit: the request on standard input contains a NUL byte", code: ExitStatus.usage)
        case .failure(.notUTF8):
            throw Failure(message: "authkit: the request on standard input is not UTF-8 text", code: ExitStatus.usage)
        case .failure(.longLine):
            throw Failure(message: "authkit: a line of the request is longer than \(maxLineBytes / 1024) KiB", code: ExitStatus.usage)
        }
    }

    /// One line of standard input (without its newline), for clients that keep the pipe open
    /// while they wait for the answer (cargo); nil at the end of input. Bounded like
    /// ``readInput()``.
    static func readLine() throws(Failure) -> String? {
        guard isatty(0) != 1 else {
            throw Failure(
                message: "authkit: the client's request is read from standard input, which is a terminal here; pipe it in",
                code: ExitStatus.usage)
        }
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        while true {
            let count = read(0, &byte, 1)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            if byte == 0x0A { break }
            guard bytes.count < maxLineBytes else {
                throw Failure(message: "authkit: a line of the request is longer than \(maxLineBytes / 1024) KiB", code: ExitStatus.usage)
            }
            bytes.append(byte)
        }
        if bytes.isEmpty && byte != 0x0A { return nil }
        guard !bytes.contains(0) else {
            throw Failure(message: "authkit: the request on standard input contains a NUL byte", code: ExitStatus.usage)
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw Failure(message: "authkit: the request on standard input is not UTF-8 text", code: ExitStatus.usage)
        }
        return text.hasSuffix("\r") ? String(text.dropLast()) : text
    }

    /// Serves one request: the adapter's answer on standard output with its status; a failure
    /// is its one line on standard error and its exit code, with nothing on standard output.
    nonisolated(nonsending) static func serve(_ adapter: any CredentialAdapter.Type, _ flags: CredentialFlags) async throws {
        let answer: CredentialAnswer
        do throws(Failure) {
            // Checked here, not in validate(): a plug-in's error is one line, not a usage page.
            if !adapter.actions.isEmpty && !adapter.actions.contains(flags.action) {
                let listed = adapter.actions.dropLast().joined(separator: ", ") + " or " + (adapter.actions.last ?? "")
                throw Failure(
                    message: "authkit: unknown action ‘\(flags.action)’: \(adapter.client) asks \(listed)", code: ExitStatus.usage)
            }
            // (Not twice: the lean client, which handed this process the request, said it. The
            // variable goes, so that nothing this process starts inherits it.)
            if let greeting = adapter.greeting {
                let greeted = LeanTokenPlan.greeted(getenv(LeanTokenPlan.greetedVariable).map { String(cString: $0) }, pid: getpid())
                unsetenv(LeanTokenPlan.greetedVariable)
                if !greeted { Terminal.write(fd: 1, greeting) }
            }
            answer = try await adapter.respond(to: flags)
        } catch {
            if !error.message.isEmpty { Terminal.printError(error.message) }
            throw error.code
        }
        if let message = answer.message { Terminal.printError(message) }
        if !answer.output.isEmpty { Terminal.write(fd: 1, answer.output) }
        if answer.status != .success { throw answer.status }
    }
}
