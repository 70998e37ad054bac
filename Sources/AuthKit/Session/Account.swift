import SecretStore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What `authkit status` shows about one signed-in account. Holds no token.
public struct Account: Sendable {
    public var account: String
    public var name: String?
    public var issuer: String
    public var tenantID: String?
    public var clientID: String
    public var scopes: [String]
    public var accessTokenExpiresAt: Date?
    public var hasRefreshToken: Bool
    /// When the id_token's signature and claims were last verified.
    public var idTokenVerifiedAt: Date?
    public var signedInAt: Date?
    public var graphBaseURL: String?
    public var location: StorageLocation
    /// Set when the stored record cannot be read (locked collection, corrupt item): the
    /// other fields then come from the item's attributes only.
    public var problem: String?
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
        graphBaseURL = record.graphBaseURL
        self.location = location
        problem = nil
        refreshProblem = record.refreshProblem
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

/// An access token to send as `Authorization: Bearer …`. The value is a secret: the
/// description shows only its expiry and scopes.
public struct AccessToken: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public let value: String
    public let expiresAt: Date
    public let scopes: [String]
    public let account: String
    /// True when this call refreshed it.
    public let refreshed: Bool

    public var description: String {
        "AccessToken(\(account), expires \(Int(clamping: expiresAt.timeIntervalSince1970)), scopes \(scopes.joined(separator: " ")))"
    }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: ["account": account, "expiresAt": expiresAt]) }
}
