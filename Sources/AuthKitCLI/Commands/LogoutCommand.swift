import ArgumentParser
import AuthKit

/// `authkit logout`: removes the shared sign-in, revoking the refresh token first.
struct LogoutCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "logout",
        abstract: "Sign out: revoke the refresh token where supported and remove the stored tokens.",
        usage: "authkit logout [--account <name> | --all] [<options>]",
        discussion: """
            Removes the group's sign-in from the token store; every tool of the group sees the \
            sign-out at once. Where the provider advertises a revocation endpoint (RFC 7009), \
            the refresh token is revoked first. Signing out when nobody is signed in is not an \
            error.

            With several accounts in the group, name one with --account or remove all with --all.
            """
    )

    @OptionGroup var session: SessionOptions

    @Option(help: ArgumentHelp("The account to sign out.", valueName: "name"))
    var account: String?

    @Flag(help: "Sign out every account of the group.")
    var all = false

    func validate() throws {
        if all && account != nil { throw ValidationError("--account and --all exclude each other") }
    }

    func run() async throws {
        do {
            let profile = try session.resolveProfile()
            let shared = try session.session(for: profile, context: .person)
            if account == nil && !all {
                let accounts = try await shared.accounts()
                if accounts.count > 1 {
                    Terminal.printError(
                        Voice.error(
                            "the group \(profile.group) holds \(accounts.count) accounts (\(accounts.map(\.account).joined(separator: ", ")))",
                            hint: "name one with --account, or use --all"))
                    throw ExitStatus.usage
                }
            }
            let outcomes = try await shared.signOut(account: account)
            if outcomes.isEmpty {
                Terminal.printError(
                    account.map { "Nothing to do: \($0) is not signed in in \(profile.group)." }
                        ?? "Nothing to do: nobody is signed in in \(profile.group).")
                return
            }
            for outcome in outcomes {
                let revocation: String
                switch outcome.revocation {
                case .revoked: revocation = "refresh token revoked"
                case .notSupported: revocation = "no revocation (the provider offers none)"
                case .failed(let reason): revocation = "revocation failed: \(reason)"
                }
                Terminal.printError("✓ Signed out \(outcome.account) from \(profile.group) (\(revocation)).")
            }
            // The command that signs the same sign-in in again, as it was made: the profile's
            // settings when they name this issuer and client, else the removed record's.
            if let last = outcomes.last {
                Terminal.printError("To sign in again: \(Self.loginAgain(last, profile: profile, session: session.settings))")
            }
        } catch let error as AuthKitError {
            let notice = await AgentNotice.storeNotice(
                for: error, command: "logout", refusal: "sign out", environment: session.settings.environment)
            throw AgentNotice.failure(error, notice)
        }
    }

    /// `authkit login` with whatever the current settings do not supply of `outcome`'s sign-in.
    static func loginAgain(_ outcome: SharedSession.SignOutOutcome, profile: Profile, session: SignInSelector) -> String {
        loginCommand(session, profile: profile, issuer: outcome.issuer, clientID: outcome.clientID)
    }
}
