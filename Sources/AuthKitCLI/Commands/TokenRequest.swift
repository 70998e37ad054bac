import AuthKit
import AuthKitCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `authkit token --json`: field names are stable, like `status --json`'s.
struct TokenReport: Encodable {
    var accessToken: String
    var tokenType = "Bearer"
    var expiresAt: String
    var expiresIn: Int
    var scopes: [String]
    var account: String
    var issuer: String?

    init(token: AccessToken, issuer: String?, now: Date) {
        accessToken = token.value
        tokenType = token.tokenType
        expiresAt = RelativeTime.rfc3339(token.expiresAt)
        expiresIn = max(0, Int(clamping: token.expiresAt.timeIntervalSince(now)))
        scopes = token.scopes
        account = token.account
        self.issuer = issuer
    }
}

/// What `authkit token` was asked for, however it was parsed (ArgumentParser or
/// ``TokenFastPath``), and how it is carried out.
struct TokenRequest: Equatable {
    var selector = SignInSelector()
    var minTTL = FastPathOptions.tokenMinTTL
    var scopes: [String] = []
    /// `--resource`: the APIs the token is for (RFC 8707).
    var resources: [String] = []
    /// `--exchange --audience A`: a token exchanged for `A` (RFC 8693) rather than refreshed.
    var exchangeAudience: String?
    var exchange = false
    /// `--json`: one object with the token and what scripts need around it.
    var json = false
    /// `--id-token`: a verified id_token instead of the access token.
    var idToken = false
    /// `--allow-shorter`: hand out a fresh token even when the provider's tokens do not live
    /// `--min-ttl` (by default that is exit 8: the caller asked for something it did not get).
    var allowShorter = false

    static let minTTLRange = FastPathOptions.minTTLRange

    var session: SignInSelector { selector }
    var account: String? { selector.account }

    /// Prints the token (and a newline) on standard output, or reports why not. `profile`:
    /// the settings already resolved (their warnings shown), else resolved here.
    func run(profile: Profile? = nil) async throws {
        let fetched: Result<(String, Date), AuthKitError>
        do throws(AuthKitError) {
            let (output, expiresAt) = try await fetch(profile)
            fetched = .success((output + "\n", expiresAt))
        } catch {
            fetched = .failure(error)
        }
        var notice: AgentNotice.Notice?
        if case .failure(let error) = fetched {
            notice = await AgentNotice.storeNotice(for: error, command: "token", refusal: nil, environment: session.environment)
        }
        try finish(fetched, notice: notice)
    }

    /// Prints what was fetched (the line and when its token expires) or reports why not:
    /// one way for the agent's answer and the store's. `notice` replaces the error's words.
    private func finish(_ fetched: Result<(String, Date), AuthKitError>, notice: AgentNotice.Notice? = nil) throws {
        let output: String, expiresAt: Date
        switch fetched {
        case .success(let value): (output, expiresAt) = value
        case .failure(let error):
            switch error.category {
            case .storage where otherGroupsHint(session) != nil:
                // The default group's store is not there because nobody uses it: the group is.
                Terminal.printError(Voice.error("nobody is signed in to the group \(Profile.defaultGroup)", hint: otherGroupsHint(session)))
                throw ExitStatus.loginNeeded
            case .loginNeeded:
                // One line: scripts log stderr, and `$(authkit token)` leaves stdout empty.
                Terminal.printError("authkit: \(error); " + signInHint(session))
                throw ExitStatus.loginNeeded
            default:
                throw AgentNotice.failure(error, notice)
            }
        }
        let left = Int(clamping: expiresAt.timeIntervalSinceNow)
        guard left >= minTTL || allowShorter else {
            Terminal.printError(
                Voice.error(
                    "the provider's fresh token lives \(left) s, less than --min-ttl \(minTTL) s",
                    hint: "lower --min-ttl, or accept it with --allow-shorter"))
            throw ExitStatus.tokenTooShort
        }
        Terminal.write(fd: 1, output)
    }

    /// The token straight from the agent, on the main thread before anything else starts
    /// (no task, no thread, no store): true when the agent answered — the token printed, or its
    /// failure reported exactly as ``run(profile:)`` would (thrown). Only for a plain
    /// `authkit token`; false when there is no agent to ask, and ``run(profile:)`` goes the
    /// usual way.
    func runThroughAgentNow(_ profile: Profile) throws -> Bool {
        guard !json, !idToken, !exchange,
            let answer = AgentRoute.accessTokenNow(
                group: profile.group, storage: profile.storage, account: account, scopes: scopes.isEmpty ? nil : scopes,
                resources: resources, minimumLifetime: .seconds(minTTL), environment: session.environment)
        else { return false }
        try finish(answer.map { ($0.value + "\n", $0.expiresAt) })
        return true
    }

    /// The line to print — the token, the id_token, or the `--json` object — and when the
    /// token expires.
    private func fetch(_ resolved: Profile?) async throws(AuthKitError) -> (String, Date) {
        let profile: Profile
        if let resolved { profile = resolved } else { profile = try session.resolveProfile() }
        let shared = try session.session(for: profile, context: .person)
        if idToken {
            let token = try await shared.validIDToken(account: account, minimumLifetime: .seconds(minTTL))
            return (token.value, token.expiresAt)
        }
        let token =
            exchange
            ? try await shared.exchangedToken(
                audience: exchangeAudience, resources: resources, scopes: scopes.isEmpty ? nil : scopes, account: account,
                minimumLifetime: .seconds(minTTL))
            : try await shared.validAccessToken(
                account: account, minimumLifetime: .seconds(minTTL), scopes: scopes.isEmpty ? nil : scopes, resources: resources)
        guard json else { return (token.value, token.expiresAt) }
        let issuer = try await shared.accounts().first { $0.account == token.account }?.issuer
        do throws(JSONOutputError) {
            return (try JSONOutput.render(TokenReport(token: token, issuer: issuer, now: Date())), token.expiresAt)
        } catch {
            throw .unsupported(error.description)
        }
    }
}
