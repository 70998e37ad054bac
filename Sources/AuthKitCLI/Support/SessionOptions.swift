import ArgumentParser
import AuthKit
import AuthKitCore
import SecretStore

extension StorageChoice: ExpressibleByArgument {}
extension DPoPMode: ExpressibleByArgument {}

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Options every command that touches the shared sign-in accepts: the sign-in
/// (``SignInOptions``) and `--insecure-storage`.
struct SessionOptions: ParsableArguments {
    @OptionGroup var signIn: SignInOptions

    var profile: String? { signIn.profile }
    var group: String? { signIn.group }
    var storage: StorageChoice? { signIn.storage }

    @Flag(name: .customLong(OptionName.insecureStorage), help: "The same as --storage plain-file.")
    var insecureStorage = false

    // Never a way in for a secret: any user can read another's command line (`ps`). Parsed
    // only to say so; the value is never repeated.
    @Option(name: .customLong("client-secret"), help: .hidden)
    var clientSecretFlag: String?

    func validate() throws {
        if insecureStorage, let storage, storage != .plainFile {
            throw ValidationError("--insecure-storage means --storage plain-file; it contradicts --storage \(storage.rawValue)")
        }
        if clientSecretFlag != nil {
            throw ValidationError(
                "a client secret is never taken from the command line, where other users can see it (ps); "
                    + "set AUTHKIT_CLIENT_SECRET or client_secret in the config file (chmod 600)")
        }
    }

    /// The parsed values as a plain value (ArgumentParser's wrappers trap when read unparsed),
    /// with `account` when the command takes one.
    func selector(account: String? = nil) -> SignInSelector {
        signIn.selector(account: account, insecureStorage: insecureStorage)
    }

    var settings: SignInSelector { selector() }

    func resolveProfile(_ more: ProfileOverrides = ProfileOverrides()) throws(AuthKitError) -> Profile {
        try settings.resolveProfile(more)
    }

    func session(
        for profile: Profile, context: StoreContext = .background, program: String? = nil
    ) throws(AuthKitError) -> SharedSession {
        try settings.session(for: profile, context: context, program: program)
    }
}

/// Which sign-in a command names — profile, group, account, store — however it was parsed
/// (ArgumentParser's ``SessionOptions``, or a fast path): embedded in every request and plug-in
/// flag set, never copied field by field.
struct SignInSelector: Equatable {
    var profile: String?
    var group: String?
    /// The account, when the group holds several (nil: the group's most recent sign-in).
    var account: String?
    var insecureStorage = false
    var storage: StorageChoice?

    var environment: [String: String] { ProcessInfo.processInfo.environment }

    /// The options that name this sign-in on a command line (`--profile P --group G
    /// --storage S`; the account is the command's own): for hints, and for the configuration a
    /// `setup` command writes, which runs authkit again.
    var words: [String] {
        var words: [String] = []
        if let profile { words += ["--" + OptionName.profile, profile] }
        if let group { words += ["--" + OptionName.group, group] }
        if insecureStorage { words.append("--" + OptionName.insecureStorage) }
        if let storage { words += ["--" + OptionName.storage, storage.rawValue] }
        return words
    }

    /// The profile with these settings (and `more`) applied on top of environment and files;
    /// `warn`: say a broken profile the command does not use (once per command: a hint that
    /// resolves again passes false).
    func resolveProfile(_ more: ProfileOverrides = ProfileOverrides(), warn: Bool = true) throws(AuthKitError) -> Profile {
        var overrides = more
        overrides.profile = profile
        overrides.group = group
        if insecureStorage { overrides.storage = .plainFile }
        if let storage { overrides.storage = storage }
        do {
            let resolver = try ProfileResolver.load(environment: environment)
            var resolved = try resolver.resolve(overrides)
            // A session on a forward that names no group uses the one group the forward serves
            // (what `authkit ssh --group G` or `agent forward --group G` was opened for).
            if resolved.sources["group"] == nil, let served = ForwardedGroups.served(environment: environment), served.count == 1 {
                overrides.group = served[0]
                resolved = try resolver.resolve(overrides)
                resolved.sources["group"] = "the forwarded agent socket (AUTHKIT_AGENT_SOCK)"
            }
            // A broken profile this command does not use: said, not fatal.
            if warn { for warning in resolver.warnings(using: resolved) { Terminal.printError("authkit: warning: \(warning)") } }
            return resolved
        } catch {
            throw .configuration(error)
        }
    }

    /// The shared session of the profile's group, in the profile's store. `prompts`: which
    /// keyring dialogs it may cause — none unless a command a person runs asks (plug-ins,
    /// `exec` and refreshes never show one).
    /// `program`: the program the token is for, when authkit runs it (`exec`), as the agent's
    /// log names it.
    func session(
        for profile: Profile, context: StoreContext = .background, program: String? = nil
    ) throws(AuthKitError) -> SharedSession {
        var environment = self.environment
        environment[AgentRoute.programKey] = program
        return try SharedSession(
            group: profile.group, store: profile.storage.makeStore(context), environment: environment)
    }
}

/// Reports an AuthKit error on standard error — `authkit: SUMMARY` and at most one `hint:`
/// line — and turns it into the documented exit code. The full text (a library's long
/// message) goes to the debug log (`AUTHKIT_LOG=debug`).
func failure(_ error: AuthKitError, hint: String? = nil) -> ExitCode {
    if error.summary != error.description { LogSetup.logger.debug("the full error", metadata: ["error": "\(error)"]) }
    Terminal.printError(Voice.error(error.summary, hint: hint ?? error.hint))
    return exitCode(for: error)
}

func exitCode(for error: AuthKitError) -> ExitCode {
    exitCode(for: error.category)
}

func exitCode(for category: AuthKitError.Category) -> ExitCode {
    switch category {
    case .usage: return ExitStatus.usage
    case .loginNeeded: return ExitStatus.loginNeeded
    case .storage: return ExitStatus.storageUnavailable
    case .provider: return ExitStatus.providerError
    case .configurationRejected: return ExitStatus.configurationRejected
    case .refused: return ExitStatus.refused
    }
}

/// When the command named no group and the default one was never signed in here, but others
/// were: which, so that "no D-Bus" or "nobody is signed in" does not hide a missing `--group`.
func otherGroupsHint(_ options: SignInSelector) -> String? {
    guard options.group == nil, let profile = try? options.resolveProfile(warn: false), profile.sources["group"] == nil,
        LoginRecord.entry(for: profile.group, environment: options.environment) == nil
    else { return nil }
    let others = LoginRecord.groups(environment: options.environment).filter { $0 != profile.group }
    guard let first = others.first else { return nil }
    return "no --group, AUTHKIT_GROUP or profile named a group, so this was the default \(profile.group); sign-ins here were made for "
        + "\(others.prefix(5).joined(separator: ", ")): name one, e.g. --group \(first) (or AUTHKIT_GROUP=\(first))"
}

/// What to do when nobody (or not the named account) is signed in: the one hint every command
/// gives, naming the whole command that signs this group and profile in — with the issuer and
/// client id of the group's last sign-in (``LoginRecord``) where the settings supply none.
func signInHint(_ options: SignInSelector) -> String {
    if let other = otherGroupsHint(options) { return other }
    // A session on a forward signs in nowhere but on the machine that forwarded it.
    if ForwardedGroups.served(environment: options.environment) != nil {
        let group = (try? options.resolveProfile(warn: false))?.group ?? options.group ?? Profile.defaultGroup
        return "this session's tokens come from a forwarded agent socket: sign in on the machine that forwarded it "
            + "(`authkit login --group \(group)` there), not here"
    }
    guard let profile = try? options.resolveProfile(warn: false),
        let last = LoginRecord.entry(for: profile.group, environment: options.environment)
    else { return "run `\(loginCommand(options))` to sign in" }
    return "run `\(loginCommand(options, profile: profile, issuer: last.issuer, clientID: last.clientID))` to sign in"
}

/// `authkit login` for these settings, adding the issuer and client id of a known sign-in
/// where `profile` (the settings resolved) names others or none.
func loginCommand(_ options: SignInSelector, profile: Profile, issuer: String, clientID: String) -> String {
    var extra: [String] = []
    if profile.issuer != issuer { extra += ["--issuer", Setup.shellQuoted(issuer)] }
    if profile.clientID != clientID { extra += ["--client-id", Setup.shellQuoted(clientID)] }
    var selector = options
    if !extra.isEmpty, selector.group == nil, profile.group != Profile.defaultGroup { selector.group = profile.group }
    return loginCommand(selector, extra: extra.joined(separator: " "))
}

/// The command that signs in again for this group/profile, for hints.
func loginCommand(_ options: SessionOptions, extra: String = "") -> String {
    loginCommand(options.settings, extra: extra)
}

func loginCommand(_ options: SignInSelector, extra: String = "") -> String {
    var words = ["authkit", "login"] + options.words
    if !extra.isEmpty { words.append(extra) }
    return words.joined(separator: " ")
}
