import ArgumentParser
import AuthKit
import SecretStore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `authkit status`: who is signed in in the group, and whether the sign-in is usable.
struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show who is signed in in the group and whether the sign-in is usable.",
        usage: "authkit status [--json] [<options>]",
        discussion: """
            For each account of the group: who, issuer and tenant, scopes, when the access \
            token expires, whether a refresh token is present, when the id_token was verified, \
            and where the tokens are stored; then which other groups hold a sign-in (unless \
            --group, AUTHKIT_GROUP or the config names the group). Reads the token store only: \
            no network.

            Exit status: 0 when at least one account is usable (its access token is valid or \
            it can be refreshed), 1 when nobody is signed in or a new login is needed, 2 for \
            usage or configuration errors, 3 when the token store is unavailable (no D-Bus session, no \
            Secret Service, or the keyring holding the sign-in is locked). A locked encrypted \
            store's sign-ins are shown as locked (`authkit unlock`), with 0.

            --json prints one JSON object whose field names are stable (README, "status --json").
            """
    )

    @OptionGroup var session: SessionOptions

    @Flag(help: "Print a JSON object instead of text.")
    var json = false

    func run() async throws {
        let profile: Profile
        do { profile = try session.resolveProfile() } catch { throw failure(error) }
        let accounts: [Account]
        do {
            accounts = try await session.session(for: profile, context: .person).accounts()
        } catch {
            // A locked encrypted store: its sign-ins are there, unreadable until `authkit unlock`.
            if case .storage(.encryptedStoreLocked(let directory)) = error, let count = await Self.lockedItems(profile), count > 0 {
                let line = "locked: run `authkit unlock` to use them"
                if json {
                    printJSON(StatusReport(group: profile.group, signedIn: true, usable: false, accounts: [], error: line))
                } else {
                    Terminal.printOut(
                        "Group \(profile.group)\n  the encrypted store \(directory) holds \(count) item\(count == 1 ? "" : "s") of the group "
                            + "(who signed in is inside them)\n  \(line)")
                }
                return
            }
            if json {
                // Scripts get an answer on stdout even now; whether anyone is signed in is unknown.
                printJSON(StatusReport(group: profile.group, signedIn: nil, usable: false, accounts: [], error: error.description))
            }
            let notice = await AgentNotice.storeNotice(
                for: error, command: "status", refusal: "tell a sign-in's status", environment: session.settings.environment)
            throw AgentNotice.failure(error, notice)
        }
        let now = Date()
        let usable = accounts.contains { Self.isUsable($0, now: now) }
        if json {
            printJSON(
                StatusReport(
                    group: profile.group, signedIn: !accounts.isEmpty, usable: usable,
                    accounts: accounts.map { AccountReport($0, now: now) }, error: nil))
        } else {
            printText(profile: profile, accounts: accounts, now: now)
            if !accounts.isEmpty, let state = EncryptedStoreSetup.stateLine(profile) {
                Terminal.printOut("  encrypted store: \(state)")
            }
            if accounts.count > 1 {
                let shared = try? session.session(for: profile, context: .person)
                if let shared {
                    let current = await AccountUseCommand.effective(shared, accounts: accounts.map(\.account))
                    Terminal.printOut("  current:        \(current.account ?? "?") (\(current.why); `authkit account use NAME` chooses)")
                }
            }
            if !accounts.isEmpty, let agent = await Self.agentLine() { Terminal.printOut(agent) }
            // Which other groups hold a sign-in, unless the group was asked for by name.
            if profile.sources["group"] == nil, let shared = try? session.session(for: profile, context: .person) {
                let others = await shared.otherSignedInGroups()
                if !others.isEmpty {
                    Terminal.printOut(
                        "\(accounts.isEmpty ? "" : "\n")Also signed in: the group\(others.count == 1 ? "" : "s") \(others.joined(separator: ", ")) "
                            + "(`authkit status --group \(others[0])`)")
                }
            }
        }
        if usable { return }
        // A sign-in behind a locked collection is not gone: the store is unavailable until unlocked.
        if let locked = accounts.first(where: { $0.location.isLocked }) {
            Terminal.printError(
                Voice.error(
                    "the keyring holding the sign-in is locked (\(locked.location))",
                    hint:
                        "unlock it (your desktop's Passwords and Keys, or `gnome-keyring-daemon --unlock` in a shell without one) and try again"
                ))
            throw ExitStatus.storageUnavailable
        }
        throw ExitStatus.loginNeeded
    }

    /// How many items a locked encrypted store holds for the profile's group (nil: another store).
    static func lockedItems(_ profile: Profile) async -> Int? {
        guard profile.storage == StorageChoice(EncryptedFileStore.self), let group = try? SecretGroup(profile.group) else { return nil }
        return try? await EncryptedFileStore().storageStatus(for: group).itemCount
    }

    /// Whether the user's agent serves these tokens from memory, in one line (nil: no agent).
    static func agentLine() async -> String? {
        guard let client = AgentClient(environment: ProcessInfo.processInfo.environment),
            case .answer(let hello) = await client.send(AgentRequest.hello), hello.ok
        else { return nil }
        let kind = hello.restricted == true ? "a forwarded agent socket (access tokens only)" : "the agent (tokens from memory)"
        return "    served by:      \(kind), pid \(hello.pid.map(String.init) ?? "?"), \(client.path)"
    }

    static func isUsable(_ account: Account, now: Date) -> Bool {
        guard account.problem == nil else { return false }
        return account.hasRefreshToken || (account.accessTokenExpiresAt.map { $0 > now } ?? false)
    }

    private func printText(profile: Profile, accounts: [Account], now: Date) {
        guard !accounts.isEmpty else {
            Terminal.printOut("Nobody is signed in in the group \(profile.group).")
            Terminal.printError("hint: " + signInHint(session.settings))
            return
        }
        var lines = ["Group \(profile.group)"]
        for account in accounts {
            let who = account.name.map { "\($0) (\(account.account))" } ?? account.account
            if let problem = account.problem {
                lines.append("  ✗ \(who): the stored sign-in cannot be used: \(problem)")
                lines.append("    storage:        \(account.location)")
                continue
            }
            lines.append("  \(Self.isUsable(account, now: now) ? "✓" : "✗") Signed in as \(who)")
            let tenant = account.tenantID.map { " (tenant \($0))" } ?? ""
            lines.append("    issuer:         \(account.issuer)\(tenant)")
            lines.append("    client:         \(account.clientID)")
            lines.append("    scopes:         \(account.scopes.joined(separator: " "))")
            if let expires = account.accessTokenExpiresAt {
                lines.append("    access token:   \(expires > now ? "expires" : "expired") \(RelativeTime.describe(expires, now: now))")
            }
            lines.append(
                "    refresh token:  \(account.hasRefreshToken ? "present" : "absent (a new login is needed when the access token expires)")"
            )
            lines.append(
                "    id_token:       "
                    + (account.idTokenVerifiedAt.map { "signature and claims verified \(RelativeTime.describe($0, now: now))" }
                        ?? "not verified"))
            if let key = account.dpopKey {
                lines.append(
                    "    bound to key:   DPoP; the key is "
                        + (key == "tpm" ? "in the TPM (it never leaves it)" : "in the store beside the sign-in (no TPM)"))
            }
            if let problem = account.refreshProblem {
                lines.append("    last refresh:   not used (\(problem)); the next request refreshes again")
            }
            lines.append("    storage:        \(account.location)")
            if account.location.isPlainFile {
                lines.append("    WARNING: the tokens are in a plain file, not encrypted; anyone who can read it can use them.")
            }
        }
        Terminal.printOut(lines.joined(separator: "\n"))
    }

    private func printJSON(_ report: StatusReport) {
        do throws(JSONOutputError) {
            Terminal.printData(try JSONOutput.render(report))
        } catch {
            Terminal.printError("authkit: \(error)")
        }
    }
}

/// `authkit status --json`. Field names are stable (README, "status --json"); new fields may be
/// added. Every field is always present, `null` when it does not apply, so scripts can rely on
/// the shape.
struct StatusReport: Encodable {
    var group: String
    /// nil when the token store could not be read.
    var signedIn: Bool?
    var usable: Bool
    var accounts: [AccountReport]
    var error: String?
}

struct AccountReport: Encodable {
    var account: String
    var name: String?
    var issuer: String
    var tenantID: String?
    var clientID: String
    var scopes: [String]
    var accessTokenExpiresAt: String?
    var accessTokenExpiresIn: Int?
    var accessTokenValid: Bool
    var refreshToken: Bool
    /// `Bearer` or `DPoP`.
    var tokenType: String
    /// A DPoP sign-in's key: `tpm` or `store`.
    var dpopKey: String?
    var idTokenVerifiedAt: String?
    var usable: Bool
    var storage: StorageReport
    var problem: String?
    var refreshProblem: String?

    init(_ account: Account, now: Date) {
        self.account = account.account
        name = account.name
        issuer = account.issuer
        tenantID = account.tenantID
        clientID = account.clientID
        scopes = account.scopes
        accessTokenExpiresAt = account.accessTokenExpiresAt.map(RelativeTime.rfc3339)
        accessTokenExpiresIn = account.accessTokenExpiresAt.map { max(0, Int(clamping: $0.timeIntervalSince(now))) }
        accessTokenValid = account.accessTokenExpiresAt.map { $0 > now } ?? false
        refreshToken = account.hasRefreshToken
        tokenType = account.tokenType
        dpopKey = account.dpopKey
        idTokenVerifiedAt = account.idTokenVerifiedAt.map(RelativeTime.rfc3339)
        usable = StatusCommand.isUsable(account, now: now)
        storage = StorageReport(account.location)
        problem = account.problem
        refreshProblem = account.refreshProblem
    }
}

struct StorageReport: Encodable {
    /// The store's name (`secret-service`, `kernel-keyring`, `plain-file` …).
    var kind: String
    var collection: String?
    var groupCollection: Bool?
    var locked: Bool?
    var path: String?
    var encrypted: Bool
    /// The kernel keyring's id (kernel-keyring only).
    var keyring: Int32?
    /// Seconds unused after which the kernel drops the keyring (kernel-keyring only).
    var expirySeconds: Int?
    /// True when the tokens live in memory only and are gone at reboot.
    var memoryOnly = false

    init(_ location: StorageLocation) {
        kind = location.storeName
        let facts = location.facts
        (collection, groupCollection, locked, path) = (facts.collection, facts.groupCollection, facts.locked, facts.path)
        (encrypted, keyring, expirySeconds, memoryOnly) = (facts.encrypted, facts.keyring, facts.expirySeconds, facts.memoryOnly)
    }
}
