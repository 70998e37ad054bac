import SecretStore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What `authkit status` shows about one signed-in account. Holds no token.
public struct Account: Sendable {
    /// The account name (the id_token's `preferred_username`, `email` or `sub`).
    public var account: String
    /// The person's name, when the id_token carries one.
    public var name: String?
    /// The issuer that signed the person in.
    public var issuer: String
    /// Entra's tenant id (`tid`), when present.
    public var tenantID: String?
    /// The client id the sign-in belongs to.
    public var clientID: String
    /// The scopes the provider granted.
    public var scopes: [String]
    /// When the stored access token expires.
    public var accessTokenExpiresAt: Date?
    /// Whether a refresh token is stored (the sign-in can renew itself).
    public var hasRefreshToken: Bool
    /// When the id_token's signature and claims were last verified.
    public var idTokenVerifiedAt: Date?
    /// When the person signed in.
    public var signedInAt: Date?
    /// The Microsoft Graph base URL stored with the sign-in, if any.
    public var graphBaseURL: String?
    /// Where the sign-in is stored.
    public var location: StorageLocation
    /// Set when the stored record cannot be read (locked collection, corrupt item): the
    /// other fields then come from the item's attributes only.
    public var problem: String?
    /// `Bearer`, or `DPoP` when the tokens are bound to the sign-in's key (RFC 9449).
    public var tokenType: String = "Bearer"
    /// Where a DPoP sign-in's private key is: `tpm` (it never leaves the TPM) or `store` (kept
    /// in an item of its own beside the sign-in); nil for a bearer sign-in.
    public var dpopKey: String?
    /// Why the provider's last refresh answer was not used (its id_token failed a check); its
    /// new refresh token is kept and the next request refreshes again.
    public var refreshProblem: String?

    init(record: TokenRecord, location: StorageLocation) {
        account = record.account
        name = record.name
        issuer = record.issuer
        tenantID = record.tenantID
        clientID = record.clientID
        scopes = record.scopes
        accessTokenExpiresAt = record.accessTokenExpiry
        hasRefreshToken = record.refreshToken != nil
        idTokenVerifiedAt = record.idTokenVerifiedAt.map { Date(timeIntervalSince1970: $0) }
        signedInAt = Date(timeIntervalSince1970: record.signedInAt)
        graphBaseURL = record.graphBaseURL?.url.absoluteString
        self.location = location
        problem = nil
        refreshProblem = record.refreshProblem
        tokenType = record.tokenType ?? "Bearer"
        dpopKey = record.isDPoP ? record.dpopKeyPlace ?? "store" : nil
    }

    init(unreadable item: StoredItem, reason: String) {
        account = item.key.account
        name = nil
        issuer = item.key.issuer
        tenantID = nil
        clientID = item.key.clientID
        scopes = []
        accessTokenExpiresAt = nil
        hasRefreshToken = false
        idTokenVerifiedAt = nil
        signedInAt = nil
        graphBaseURL = nil
        location = item.location
        problem = reason
        refreshProblem = nil
    }
}
