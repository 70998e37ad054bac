import AuthKitCore
import JOSE
import StrictJSON

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One account's sign-in as stored: one JSON object in one Secret Service item (kind
/// `tokens`), so an update is never half-done. It carries everything a refresh needs, so a
/// tool that names only the group can use and refresh the shared sign-in with no
/// configuration of its own.
///
/// The JSON field names are stable (README, "Storage schema"); `version` changes only with an
/// incompatible layout. Every token field is a secret: ``description`` shows none.
package struct TokenRecord: Sendable, Equatable, Codable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    package static let currentVersion = 1
    /// The `kind` attribute of token records.
    package static let kind = ItemKind.tokens.stored

    package var version: Int
    /// Incremented on every write, so a reader can tell a renewed sign-in from the one it read.
    package var generation: Int

    // Who.
    /// The id_token's `iss` (for Microsoft's multi-tenant endpoints, the tenant's issuer).
    package var issuer: String
    /// The issuer as configured for sign-in (may be a `{tenantid}` template).
    package var configuredIssuer: String
    package var subject: String
    /// The name people know the account by: `preferred_username`, else `email`, else `sub`.
    package var account: String
    package var name: String?
    package var tenantID: String?

    // What a refresh needs.
    package var clientID: String
    package var clientSecret: String?
    package var tokenEndpoint: StoredURL
    package var jwksURI: StoredURL
    package var revocationEndpoint: StoredURL?
    package var tokenEndpointAuthMethods: [String]?
    package var idTokenAlgorithms: [String]
    /// The Graph base URL of the profile used at sign-in, if any.
    package var graphBaseURL: StoredURL?

    // The tokens.
    /// `DPoP` when the tokens are bound to the key ``dpopThumbprint`` names (RFC 9449); nil
    /// for bearer tokens.
    package var tokenType: String? = nil
    /// The RFC 7638 thumbprint of the sign-in's DPoP key (kept in its own item, kind `dpop-key`).
    package var dpopThumbprint: String? = nil
    /// Where the DPoP key was made: `tpm` or `store` (for `status`).
    package var dpopKeyPlace: String? = nil
    /// The provider offers token exchange (RFC 8693; its discovery lists the grant).
    package var tokenExchange: Bool? = nil
    package var scopes: [String]
    package var accessToken: String
    /// Seconds since 1970; nil when the provider did not say (then the token is treated as
    /// needing a refresh once it is an hour old).
    package var accessTokenExpiresAt: Double?
    package var refreshToken: String?
    package var idToken: String?
    /// When the id_token's signature and claims were last verified (seconds since 1970).
    package var idTokenVerifiedAt: Double?
    /// Access tokens for other scopes than ``scopes`` (`authkit token --scope`), by the
    /// space-joined sorted scope list.
    package var additionalTokens: [String: ScopedToken]?

    /// The most ``additionalTokens`` a record keeps: a record every tool shares (and a store
    /// with a quota, as the kernel keyring's) does not grow with every narrowing asked for.
    package static let maximumAdditionalTokens = 16

    /// ``additionalTokens`` with `token` under `key`: those that expired dropped, and the ones
    /// that expire soonest while there are more than ``maximumAdditionalTokens``.
    package func addingAdditionalToken(_ token: ScopedToken, for key: String, now: Double) -> [String: ScopedToken] {
        var kept = (additionalTokens ?? [:]).filter { $0.key != key && ($0.value.expiresAt ?? 0) > now }
        while kept.count >= Self.maximumAdditionalTokens,
            let soonest = kept.min(by: { ($0.value.expiresAt ?? 0, $0.key) < ($1.value.expiresAt ?? 0, $1.key) })
        {
            kept[soonest.key] = nil
        }
        kept[key] = token
        return kept
    }

    package var signedInAt: Double
    package var refreshedAt: Double?

    /// Why the last refresh was not used, when it was not: the provider answered (and its new
    /// refresh token is kept here), but its id_token did not pass the checks. `status` shows
    /// it; the next request refreshes again. Cleared by a refresh that passes.
    package var refreshProblem: String? = nil
    /// When ``refreshProblem`` was recorded (seconds since 1970).
    package var refreshProblemAt: Double? = nil

    package struct ScopedToken: Sendable, Equatable, Codable, CustomStringConvertible, CustomReflectable {
        package var accessToken: String
        package var expiresAt: Double?
        package var scopes: [String]
        /// The resources (RFC 8707) the token was issued for, when it was asked for some.
        package var resources: [String]?

        package init(accessToken: String, expiresAt: Double?, scopes: [String], resources: [String]? = nil) {
            self.accessToken = accessToken
            self.expiresAt = expiresAt
            self.scopes = scopes
            self.resources = resources
        }

        enum CodingKeys: String, CodingKey {
            case scopes, resources
            case accessToken = "access_token"
            case expiresAt = "expires_at"
        }

        /// The first builds wrote these two names in camel case; such records stay readable.
        private enum LegacyKeys: String, CodingKey {
            case accessToken, expiresAt
        }

        package init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            scopes = try container.decode([String].self, forKey: .scopes)
            resources = try container.decodeIfPresent([String].self, forKey: .resources)
            if container.contains(.accessToken) {
                accessToken = try container.decode(String.self, forKey: .accessToken)
                expiresAt = try container.decodeIfPresent(Double.self, forKey: .expiresAt)
            } else {
                let legacy = try decoder.container(keyedBy: LegacyKeys.self)
                accessToken = try legacy.decode(String.self, forKey: .accessToken)
                expiresAt = try legacy.decodeIfPresent(Double.self, forKey: .expiresAt)
            }
        }

        package var description: String {
            "ScopedToken(\(scopes.joined(separator: " ")), until \(expiresAt.map { String(Int(clamping: $0)) } ?? "?"))"
        }
        package var customMirror: Mirror { Mirror(self, children: ["scopes": scopes, "expiresAt": expiresAt as Any]) }
    }

    enum CodingKeys: String, CodingKey {
        case version, generation, issuer, subject, account, name, scopes
        case configuredIssuer = "configured_issuer"
        case tenantID = "tenant_id"
        case clientID = "client_id"
        case clientSecret = "client_secret"
        case tokenEndpoint = "token_endpoint"
        case jwksURI = "jwks_uri"
        case revocationEndpoint = "revocation_endpoint"
        case tokenEndpointAuthMethods = "token_endpoint_auth_methods"
        case idTokenAlgorithms = "id_token_algorithms"
        case graphBaseURL = "graph_base_url"
        case accessToken = "access_token"
        case accessTokenExpiresAt = "access_token_expires_at"
        case refreshToken = "refresh_token"
        case idToken = "id_token"
        case idTokenVerifiedAt = "id_token_verified_at"
        case additionalTokens = "additional_tokens"
        case signedInAt = "signed_in_at"
        case refreshedAt = "refreshed_at"
        case refreshProblem = "refresh_problem"
        case refreshProblemAt = "refresh_problem_at"
        case tokenType = "token_type"
        case dpopThumbprint = "dpop_jkt"
        case dpopKeyPlace = "dpop_key"
        case tokenExchange = "token_exchange"
    }

    /// When the access token expires; for tokens without a stated lifetime, an hour after
    /// they were obtained.
    package var accessTokenExpiry: Date {
        if let accessTokenExpiresAt { return Date(timeIntervalSince1970: accessTokenExpiresAt) }
        return Date(timeIntervalSince1970: (refreshedAt ?? signedInAt) + 3600)
    }

    /// Whether the tokens are bound to a DPoP key.
    package var isDPoP: Bool { tokenType == "DPoP" }

    /// True when the access token lives at least `lifetime` longer at `now`.
    package func accessTokenLives(_ lifetime: Duration, at now: Date) -> Bool {
        accessTokenExpiry.timeIntervalSince(now) >= Double(lifetime.components.seconds)
    }

    package var description: String {
        "TokenRecord(\(account) @ \(issuer), generation \(generation), "
            + "access token until \(accessTokenExpiresAt.map { String(Int(clamping: $0)) } ?? "?"), "
            + "refresh token \(refreshToken == nil ? "absent" : "present"))"
    }
    package var debugDescription: String { description }
    /// `dump` and debuggers see who and until when, never a token or the client secret.
    package var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "account": account, "issuer": issuer, "clientID": clientID, "generation": generation, "scopes": scopes,
                "accessTokenExpiresAt": accessTokenExpiresAt as Any, "hasRefreshToken": refreshToken != nil,
            ])
    }

    /// Decodes a stored record. Unknown fields are ignored (a newer authkit may add some);
    /// a newer `version` is refused rather than half-read.
    package static func decode(_ bytes: [UInt8]) throws(RecordError) -> TokenRecord {
        let record: TokenRecord
        do throws(JSONDocumentError) {
            record = try JSONDocument.storedRecord.decode(TokenRecord.self, from: bytes)
        } catch {
            throw .unreadable(error.reason)
        }
        guard record.version <= currentVersion else { throw .newerVersion(record.version) }
        guard !record.accessToken.isEmpty, !record.clientID.isEmpty else {
            throw .unreadable("a required field is empty")
        }
        try record.checkNumbers()
        try record.checkTokens()
        switch (record.tokenType, record.dpopThumbprint) {
        case (nil, nil): break
        case ("DPoP", let thumbprint?) where thumbprint.utf8.count == 43 && (try? Base64URL.decode(thumbprint))?.count == 32: break
        default: throw .unreadable("its token_type and dpop_jkt are not a bearer or a DPoP sign-in authkit writes")
        }
        guard record.dpopKeyPlace == nil || (record.isDPoP && ["tpm", "store"].contains(record.dpopKeyPlace)) else {
            throw .unreadable("its dpop_key is neither tpm nor store")
        }
        return record
    }

    /// Every token read back passes the checks it passed on receipt (any process of the user
    /// can write the record): visible ASCII only, so none can add a line to git's answer, a
    /// header to a request or a line to a terminal.
    func checkTokens() throws(RecordError) {
        var tokens = [("access_token", Optional(accessToken)), ("refresh_token", refreshToken), ("id_token", idToken)]
        for token in (additionalTokens ?? [:]).values { tokens.append(("additional access_token", token.accessToken)) }
        for (name, token) in tokens {
            guard let token else { continue }
            guard TokenText.isTransportable(token) else {
                throw .unreadable("its \(name) contains spaces, control or non-ASCII characters, which authkit never stores")
            }
        }
    }

    /// Every number of a record read back is one authkit could have written: times within
    /// 0 … `TokenText.latestTime`, a non-negative generation. Anything else is a reported problem
    /// (the record is left in place), never a trap later.
    func checkNumbers() throws(RecordError) {
        func time(_ value: Double?, _ name: String) throws(RecordError) {
            guard let value else { return }
            guard value.isFinite, value >= 0, value <= TokenText.latestTime else {
                throw .unreadable("its \(name) is not a plausible time")
            }
        }
        guard generation >= 0 else { throw .unreadable("its generation is negative") }
        try time(accessTokenExpiresAt, "access_token_expires_at")
        try time(idTokenVerifiedAt, "id_token_verified_at")
        try time(signedInAt, "signed_in_at")
        try time(refreshedAt, "refreshed_at")
        try time(refreshProblemAt, "refresh_problem_at")
        for (scopes, token) in additionalTokens ?? [:] {
            try time(token.expiresAt, "expires_at of the token for \(ProviderText.clean(scopes, limit: 80) ?? "?")")
        }
    }

    /// The record as stored: JSON with sorted keys, written by the one JSON writer. A number
    /// JSON cannot carry (an infinite expiry) is an error, never an empty or partial record.
    package func encoded() throws(RecordError) -> [UInt8] {
        do {
            return try StrictJSONEncoder(options: [.sortedKeys]).encode(self)
        } catch {
            throw .unreadable("it cannot be written as JSON (\(JSONDocument.reason(error)))")
        }
    }

    package enum RecordError: Error, Sendable, Equatable, CustomStringConvertible {
        case unreadable(String)
        case newerVersion(Int)

        package var description: String {
            switch self {
            case .unreadable(let reason): return reason
            case .newerVersion(let version): return "it was written by a newer authkit (record version \(version))"
            }
        }
    }
}
