import ArgumentParser
import AuthKit

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `authkit account`: the group's accounts, and which one tools use when none is named.
struct AccountCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "account",
        abstract: "List the group's accounts, or choose the one every tool uses (the current account).",
        usage: "authkit account [<options>]\n       authkit account use <name> | --clear [<options>]",
        discussion: """
            With several accounts signed in to a group (a work and a personal one, say), tools \
            that name none use the current account: `authkit account use NAME` chooses it for \
            every tool of the group, AUTHKIT_ACCOUNT chooses it for one shell or directory \
            (direnv) and wins over it, and --account on a command wins over both. Without a \
            choice, the most recent sign-in is used.
            """,
        subcommands: [AccountListCommand.self, AccountUseCommand.self],
        defaultSubcommand: AccountListCommand.self
    )
}

struct AccountListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List the group's accounts; the current one is marked.")

    @OptionGroup var session: SessionOptions

    func run() async throws {
        let profile: Profile
        let shared: SharedSession
        let accounts: [Account]
        do throws(AuthKitError) {
            profile = try session.resolveProfile()
            shared = try session.session(for: profile, context: .person)
            accounts = try await shared.accounts()
        } catch {
            throw failure(error)
        }
        guard !accounts.isEmpty else {
            Terminal.printOut("Nobody is signed in in the group \(profile.group).")
            Terminal.printError("hint: " + signInHint(session.settings))
            throw ExitStatus.loginNeeded
        }
        do {
            let current = await AccountUseCommand.effective(shared, accounts: accounts.map(\.account))
            var lines: [String] = []
            for account in accounts {
                let mark = account.account == current.account ? "* " : "  "
                let name = account.name.map { " (\($0))" } ?? ""
                lines.append(mark + account.account + name + (account.account == current.account ? ": \(current.why)" : ""))
            }
            Terminal.printOut(lines.joined(separator: "\n"))
        }
    }
}

struct AccountUseCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "use", abstract: "Make an account the group's current account (or --clear the choice).")

    @OptionGroup var session: SessionOptions

    @Argument(help: ArgumentHelp("The account (as `authkit account` lists it).", valueName: "name"))
    var name: String?

    @Flag(help: "Forget the choice: the most recent sign-in is used again.")
    var clear = false

    func validate() throws {
        if clear == (name != nil) { throw ValidationError("name an account, or pass --clear") }
    }

    func run() async throws {
        do throws(AuthKitError) {
            let profile = try session.resolveProfile()
            let shared = try session.session(for: profile, context: .person)
            try await shared.useAccount(clear ? nil : name)
            if let name {
                Terminal.printError("✓ \(name) is the current account of \(profile.group).")
                if let overriding = ProcessInfo.processInfo.environment["AUTHKIT_ACCOUNT"], !overriding.isEmpty, overriding != name {
                    Terminal.printError("authkit: note: AUTHKIT_ACCOUNT=\(overriding) in this shell still wins over it")
                }
            } else {
                Terminal.printError("✓ No current account in \(profile.group): the most recent sign-in is used.")
            }
        } catch {
            throw failure(error)
        }
    }

    /// The account a command naming none gets, and why.
    static func effective(_ shared: SharedSession, accounts: [String]) async -> (account: String?, why: String) {
        if let variable = ProcessInfo.processInfo.environment["AUTHKIT_ACCOUNT"], !variable.isEmpty {
            return (variable, "used (AUTHKIT_ACCOUNT)")
        }
        if accounts.count > 1, let current = await shared.currentAccount() { return (current, "current (authkit account use)") }
        return (accounts.first, accounts.count > 1 ? "used (the most recent sign-in)" : "used")
    }
}
