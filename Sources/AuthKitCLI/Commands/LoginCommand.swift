import ArgumentParser
import AuthKit
import AuthKitCore
import Dispatch

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#endif

/// `authkit login`: the sign-in every tool of the group then shares.
struct LoginCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "login",
        abstract: "Sign in with the browser (or a device code) and store the tokens for the group.",
        discussion: """
            Discovers the provider from its issuer, opens the authorization URL in your browser \
            ($BROWSER, else xdg-open) and waits for the redirect to http://127.0.0.1:<port>/. \
            The sign-in uses the authorization code flow with PKCE (S256), state and nonce; the \
            id_token's signature is checked against the provider's keys before anything is \
            stored. The URL is always printed as well.

            No configuration file is needed:
              authkit login --issuer https://accounts.example.com --client-id my-cli
              authkit login --profile microsoft \\
                  --client-id 6731de76-14a6-49ae-97bc-6eba6914391e

            Over SSH, without a local browser: --paste (open the URL anywhere, then paste the \
            address the browser ends on) or --device-code (enter a code on another device).

            Where the provider offers DPoP (RFC 9449: ES256 in its \
            dpop_signing_alg_values_supported), the tokens are bound to a key made for this \
            sign-in — in the TPM when there is one (AUTHKIT_TPM), else in the store beside the \
            sign-in — so a copied refresh or access token is useless on another machine; \
            --dpop never signs in with bearer tokens. Where the provider takes pushed \
            authorization requests (RFC 9126), the browser's URL carries only a reference.

            A client secret, for providers that insist on one, comes from AUTHKIT_CLIENT_SECRET \
            or the config file — never from a flag, which other users could see in `ps`.

            With the Secret Service (the default --storage), the tokens go to your login \
            keyring (its default collection, which the desktop unlocks when you log in), \
            marked with the group's name. With \
            --own-keyring they go to a keyring of the group's own instead: your desktop asks \
            once, now, for that keyring's password, and it stays locked in each new desktop \
            session until you unlock it (git, kubectl and the agent never ask; they fail \
            until then). A keyring named after the group that already exists is always used.
            """
    )

    @OptionGroup var session: SessionOptions

    @Option(help: ArgumentHelp("The provider's issuer URL (https, or http on loopback).", valueName: "url"))
    var issuer: String?

    @Option(
        help: ArgumentHelp(
            "For a {tenantid} issuer: the tenant to sign in to (common, organizations, consumers or an id).", valueName: "tenant"))
    var tenant: String?

    @Option(name: .customLong("client-id"), help: ArgumentHelp("The OAuth client id registered with the provider.", valueName: "id"))
    var clientID: String?

    @Option(name: .customLong("scope"), help: ArgumentHelp("A scope to request besides the profile's (repeatable).", valueName: "scope"))
    var scopes: [String] = []

    @Option(name: .customLong("login-hint"), help: ArgumentHelp("Pre-fill the account name on the provider's page.", valueName: "user"))
    var loginHint: String?

    @Option(
        help: ArgumentHelp(
            "Bind the tokens to a key of this sign-in (DPoP): auto (when the provider offers it), always or never.",
            valueName: "when"))
    var dpop: DPoPMode?

    @Option(
        name: .customLong(OptionName.resource),
        help: ArgumentHelp(
            "An API later tokens may be narrowed to (RFC 8707; repeatable): some providers refuse others.", valueName: "uri"))
    var resources: [String] = []

    @Option(
        name: .customLong("redirect-port"),
        help: ArgumentHelp(
            "Listen for the browser's redirect on this port (default: any free one) — for a provider that matches the registered port.",
            valueName: "port"))
    var redirectPort: Int?

    @Flag(name: .customLong("no-browser"), help: "Only print the URL; do not open a browser.")
    var noBrowser = false

    @Flag(help: "Print the URL and accept the address the browser ends on, pasted back (for SSH sessions).")
    var paste = false

    @Flag(name: .customLong("device-code"), help: "Sign in with a code entered on another device (RFC 8628).")
    var deviceCode = false

    @Option(help: ArgumentHelp("Give up waiting for the browser or the device after this many seconds.", valueName: "seconds"))
    var timeout: Int = 180

    @Flag(help: "Print the signed-in account as JSON on standard output.")
    var json = false

    @Flag(
        name: .customLong("own-keyring"),
        help: "Keep the group's tokens in a keyring of their own, with its own password (asked now), not the login keyring.")
    var ownKeyring = false

    @Option(
        name: .customLong("passphrase-fd"),
        help: ArgumentHelp("--storage encrypted-file, first use: read the new passphrase from this descriptor.", valueName: "N"))
    var passphraseFD: Int32?

    func validate() throws {
        if [noBrowser, paste, deviceCode].filter({ $0 }).count > 1 {
            throw ValidationError("--no-browser, --paste and --device-code exclude each other")
        }
        guard (10...3600).contains(timeout) else { throw ValidationError("--timeout must be between 10 and 3600 seconds") }
        if let redirectPort, !(1...65535).contains(redirectPort) {
            throw ValidationError("--redirect-port must be between 1 and 65535")
        }
        if redirectPort != nil, deviceCode {
            throw ValidationError("--redirect-port is for the browser's redirect; --device-code has none")
        }
    }

    var mode: SignInFlow.Mode {
        if deviceCode { return .deviceCode }
        if paste { return .paste }
        if noBrowser { return .noBrowser }
        return .browser
    }

    var overrides: ProfileOverrides {
        var overrides = ProfileOverrides(issuer: issuer, tenant: tenant, clientID: clientID, extraScopes: scopes, loginHint: loginHint)
        overrides.dpop = dpop
        overrides.redirectPort = redirectPort
        overrides.resources = resources
        return overrides
    }

    func run() async throws {
        if let profile = try? session.resolveProfile(overrides), EncryptedStoreSetup.needsSetUp(profile) {
            // Nothing is created (no store, no passphrase) before the provider answered.
            do throws(AuthKitError) {
                try await SignInFlow(profile: profile, session: try session.session(for: profile)).checkProvider()
            } catch {
                throw failure(error)
            }
            try await EncryptedStoreSetup.prepare(profile, passphraseFD: passphraseFD)
        }
        let indicator = WaitIndicator()
        do throws(AuthKitError) {
            let profile = try session.resolveProfile(overrides)
            if ownKeyring, profile.storage != .secretService {
                throw AuthKitError.unsupported(
                    "--own-keyring is for the Secret Service; the sign-in goes to --storage \(profile.storage.rawValue), so leave it out")
            }
            let shared = try session.session(for: profile, context: ownKeyring ? .signInWithOwnStore : .person)
            // Before any URL is shown: a sign-in the store cannot keep is not started. (A
            // profile without issuer or client id is a usage error first: the flow says so.)
            if profile.issuer?.isEmpty == false, profile.clientID?.isEmpty == false {
                try await OwnKeyring.prepare(shared, asked: ownKeyring)
            }
            let flow = SignInFlow(profile: profile, session: shared)
            let pasted = mode == .paste ? PastedLines.stream() : nil
            let result = try await flow.run(SignInFlow.Options(mode: mode, timeout: .seconds(timeout)), pasted: pasted) { event in
                indicator.show(event)
            }
            indicator.stop()
            report(result)
        } catch {
            indicator.stop()
            throw failure(error)
        }
    }

    private func report(_ result: SignInResult) {
        let account = result.account
        var lines = ["✓ Signed in as " + (account.name.map { "\($0) (\(account.account))" } ?? account.account)]
        if let tenant = account.tenantID { lines.append("  tenant:  \(tenant)") }
        lines.append("  issuer:  \(account.issuer)")
        lines.append("  scopes:  \(result.grantedScopes.joined(separator: " "))")
        lines.append("  stored:  \(result.location)")
        if let why = result.location.fallbackExplanation {
            LogSetup.logger.debug("where the sign-in is stored", metadata: ["detail": "\(why)"])
        }
        if result.location.isPlainFile {
            lines.append("  WARNING: the tokens are in a plain file, not encrypted; anyone who can read it can use them.")
        }
        for warning in result.warnings { lines.append("  warning: \(ProviderText.displayable(warning))") }
        Terminal.printError(lines.joined(separator: "\n"))
        if json {
            do throws(JSONOutputError) {
                Terminal.printData(try JSONOutput.render(AccountReport(account, now: Date())))
            } catch {
                Terminal.printError("authkit: \(error)")
            }
        }
    }
}

/// Lines typed or pasted on standard input, for `login --paste`.
enum PastedLines {
    static func stream() -> AsyncStream<String> {
        AsyncStream { continuation in
            // A blocking read belongs on its own thread, not the cooperative pool.
            let thread = DispatchQueue(label: "authkit.paste")
            thread.async {
                while let line = readLine(strippingNewline: true) {
                    if !line.allSatisfy({ $0 == " " || $0 == "\t" }) { continuation.yield(line) }
                }
                continuation.finish()
            }
        }
    }
}
