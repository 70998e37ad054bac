import ArgumentParser
import AuthKit
import AuthKitCore
import JOSE

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `authkit credential cargo`: a cargo credential provider (cargo ≥ 1.74).
struct CredentialCargoCommand: CredentialAdapterCommand {
    static let configuration = CommandConfiguration(
        commandName: "cargo",
        abstract: "A cargo credential provider: the shared sign-in's access token for mapped registries.",
        usage: "authkit credential cargo --cargo-plugin",
        discussion: """
            cargo runs its provider as `PROGRAM --cargo-plugin` and speaks JSON lines \
            (cargo's credential-provider protocol, version 1). authkit answers `get` with \
            `Bearer TOKEN`, cached by cargo until shortly before the token expires; a \
            registry whose index URL is not mapped is "url-not-supported" (cargo tries its \
            next provider); login and logout are "operation-not-supported": cargo never signs \
            in or out of the shared sign-in. `authkit setup cargo` writes the configuration:

              [registries.internal]
              index = "sparse+https://cargo.example.com/index/"
              credential-provider = ["/usr/local/bin/authkit", "credential", "cargo"]

            and the mapping in authkit's config file ([credential "https://cargo.example.com"], \
            matched against the index URL as git URLs are). Options (--group, --profile, \
            --scope …) go after "credential cargo" in credential-provider; cargo hands them \
            over in its request.
            """
    )

    @OptionGroup var options: CredentialOptions

    @Flag(name: .customLong("cargo-plugin"), help: "How cargo runs its providers (always given by cargo).")
    var cargoPlugin = false

    typealias Adapter = CargoCredentialAdapter

    var flags: CredentialFlags { options.flags() }
}

/// cargo's credential-provider protocol: a hello, one request line, one answer line.
enum CargoCredentialAdapter: CredentialAdapter {
    static let client = "cargo"
    /// A link name for `credential-provider = "cargo-credential-authkit"`.
    static let executableAlias: String? = "cargo-credential-authkit"
    static let actions: [String] = []
    static let ownFlags: Set<String> = ["--cargo-plugin"]
    static var command: any CredentialAdapterCommand.Type { CredentialCargoCommand.self }
    static var setupCommands: [any SetupClientCommand.Type] { [SetupCargoCommand.self] }
    static var greeting: String? { CargoCredentialText.greeting }

    nonisolated(nonsending) static func respond(to flags: CredentialFlags) async throws(CredentialPlugin.Failure) -> CredentialAnswer {
        let line: String
        do throws(CredentialPlugin.Failure) {
            guard let read = try CredentialPlugin.readLine() else { return .none }  // cargo closed without asking
            line = read
        } catch {
            return answer(error: "other", message: error.message)
        }
        let request: CargoRequest
        do throws(CredentialPlugin.Failure) {
            request = try CargoRequest.read(line)
        } catch {
            return answer(error: "other", message: error.message)
        }
        guard request.kind == "get" else {
            // login, logout and anything newer: cargo never signs in or out of the shared sign-in.
            return answer(error: "operation-not-supported")
        }
        do throws(CredentialPlugin.Failure) {
            let flags = try request.flags(over: flags)
            guard let target = try target(for: request.indexURL, flags: flags) else { return answer(error: "url-not-supported") }
            let token = try await CredentialPlugin.accessToken(for: target, flags)
            let expiration = CargoCredentialText.expiration(
                expiresAt: Int(clamping: token.expiresAt.timeIntervalSince1970), minTTL: flags.minTTL)
            return CredentialAnswer(output: CargoCredentialText.answer(token: token.value, expiration: expiration))
        } catch {
            return answer(error: "other", message: error.message)
        }
    }

    /// An `{"Err": …}` answer; cargo shows `message` to the user. The exit status stays 0:
    /// cargo reports a provider that exits otherwise as crashed and hides the message.
    static func answer(error kind: String, message: String? = nil) -> CredentialAnswer {
        CredentialAnswer(output: CargoCredentialText.error(kind: kind, message: message))
    }

    /// The flags' sign-in for any registry, else the config's `[credential]` mapping of the index URL.
    static func target(for indexURL: String, flags: CredentialFlags) throws(CredentialPlugin.Failure) -> CredentialTarget? {
        // An http(s) index (a sparse one: the token goes to it): never in the clear, nor for a
        // URL whose host cannot be told for sure. A git index (ssh://git@…) is fetched without
        // the token, which goes to its config.json's API, as before.
        let plain = CargoCredentialText.fetchedURL(indexURL)
        if let url = URL(string: plain), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https" {
            guard let host = url.host(percentEncoded: true), CredentialMap.carriesTokens(scheme: scheme, host: host), url.user == nil,
                url.query == nil, url.fragment == nil, !plain.contains("\\")
            else {
                // (The host only: user info may carry a password.)
                LogSetup.logger.debug(
                    "no token for this index URL: https only (http on loopback), without user, query or fragment",
                    metadata: ["host": "\(ProviderText.displayable(url.host(percentEncoded: true) ?? "?"))"])
                return nil
            }
        }
        if flags.namesSignIn { return flags.target(entry: indexURL) }
        return try target(for: indexURL, flags: flags, in: CredentialPlugin.config())
    }

    /// The `[credential]` mapping of the index URL in `file`.
    static func target(for indexURL: String, flags: CredentialFlags, in file: ConfigFile) throws(CredentialPlugin.Failure)
        -> CredentialTarget?
    {
        let plain = CargoCredentialText.fetchedURL(indexURL)
        guard let url = URL(string: plain), url.scheme != nil, let host = url.host, !host.isEmpty else {
            LogSetup.logger.debug("cargo sent an index URL authkit cannot read", metadata: ["url": "\(ProviderText.displayable(indexURL))"])
            return nil
        }
        let mapping: CredentialTarget?
        do throws(ConfigProblem) {
            // The URL as cargo fetches it: URL.path would decode an escaped `/` into a new segment.
            mapping = try CredentialMap.urlTarget(plain, in: file)
        } catch {
            throw CredentialPlugin.Failure(message: "authkit: \(error)", code: ExitStatus.usage)
        }
        guard let mapped = mapping else {
            LogSetup.logger.debug(
                "no [credential] mapping for this index; cargo tries its next provider",
                metadata: [
                    "index": "\(ProviderText.displayable(plain))", "config": "\(file.path)",
                ])
            return nil
        }
        LogSetup.logger.debug(
            "mapped", metadata: ["index": "\(ProviderText.displayable(plain))", "entry": "[credential \"\(mapped.entry)\"]"])
        return try flags.applied(to: mapped)
    }
}

/// One request from cargo (``CargoCredentialText/Request``), with cargo's options over the
/// command line's.
typealias CargoRequest = CargoCredentialText.Request

extension CargoCredentialText.Request {
    /// `line` read as a request; what is wrong with it as a plug-in's failure.
    static func read(_ line: String) throws(CredentialPlugin.Failure) -> CargoRequest {
        do throws(CargoCredentialText.Problem) {
            return try CargoRequest(parsing: line)
        } catch {
            throw CredentialPlugin.Failure(message: "authkit: \(error)", code: ExitStatus.usage)
        }
    }

    /// The command line's flags with the options cargo passes on from `credential-provider`
    /// (after `credential cargo`, which name the subcommand when the provider is authkit itself).
    func flags(over flags: CredentialFlags) throws(CredentialPlugin.Failure) -> CredentialFlags {
        let words = options
        guard !words.isEmpty else { return flags }
        var scanner = FastPathScanner(authkitArguments: words, index: 0)
        var options = FastPathOptions(
            selector: flags.selector, scopes: flags.scopes, resources: flags.resources, minTTL: flags.minTTL)
        while scanner.index < words.count {
            guard case .handled = scanner.shared(words[scanner.index], into: &options) else {
                throw CredentialPlugin.Failure(
                    message:
                        "authkit: credential-provider option ‘\(ProviderText.displayable(words[scanner.index]))’ is not one authkit takes "
                        + "(--profile, --group, --account, --scope, --resource, --min-ttl, --storage, --insecure-storage)",
                    code: ExitStatus.usage)
            }
            scanner.index += 1
        }
        var merged = flags
        merged.selector = options.selector
        merged.scopes = options.scopes
        merged.resources = options.resources
        merged.minTTL = options.minTTL
        return merged
    }
}
