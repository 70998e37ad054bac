import StrictJSON

/// A sign-in's record as the lean client reads it from the store, without `Codable`: the
/// access token, its account and when it expires, from a record authkit's `TokenRecord.decode`
/// reads the same way.
///
/// Reading is conservative: every member authkit reads must have the type authkit reads it
/// as, every check it makes passes, and where the lean client cannot judge (a URL that is not
/// of the plainest kind, a DPoP-bound sign-in) there is no record (`nil`), and the command
/// goes to `authkit`. `LeanStoreParityTests` keeps every record this reads one authkit reads to
/// the same token, account and expiry.
package struct StoredTokenRecord: Equatable {
    package var account: String
    package var accessToken: String
    /// When the access token expires (seconds since 1970), as authkit computes it: the
    /// provider's expiry, else an hour after the token was obtained.
    package var expiresAt: Double

    /// The limits authkit reads a stored record within.
    package static let limits = JSONLimits(maximumBytes: 1 << 20, maximumDepth: 8)
    /// The record layout this reads (`TokenRecord.currentVersion`).
    package static let version: Int64 = 1

    private static let strings = [
        "issuer", "configured_issuer", "subject", "account", "client_id", "access_token", "name", "tenant_id", "client_secret",
        "refresh_token", "id_token", "refresh_problem",
    ]
    private static let required = [
        "version", "generation", "issuer", "configured_issuer", "subject", "account", "client_id", "token_endpoint", "jwks_uri",
        "id_token_algorithms", "scopes", "access_token", "signed_in_at",
    ]
    private static let times = ["access_token_expires_at", "id_token_verified_at", "signed_in_at", "refreshed_at", "refresh_problem_at"]
    private static let urls = ["token_endpoint", "jwks_uri", "revocation_endpoint", "graph_base_url"]
    private static let lists = ["scopes", "token_endpoint_auth_methods", "id_token_algorithms"]
    /// A DPoP-bound sign-in's members: its checks (the key's thumbprint) are authkit's.
    private static let dpop = ["token_type", "dpop_jkt", "dpop_key"]

    /// The record in `secret`, or nil where authkit would refuse it or the lean client cannot
    /// tell.
    package init?(secret: [UInt8]) {
        guard let value = try? JSONValue(parsing: secret, limits: Self.limits), let object = value.objectValue else { return nil }
        // A member that is null counts as absent, as Codable's optional members read it.
        func member(_ name: String) -> JSONValue? {
            guard let value = object[name], !value.isNull else { return nil }
            return value
        }
        for name in Self.required where member(name) == nil { return nil }
        for name in Self.dpop where member(name) != nil { return nil }
        for name in Self.strings { if let value = member(name), value.stringValue == nil { return nil } }
        for name in Self.lists { if let value = member(name), !Self.isStrings(value) { return nil } }
        for name in Self.urls {
            if let value = member(name) {
                guard let text = value.stringValue, PlainURL.isPlain(text, loopbackHTTP: true) else { return nil }
            }
        }
        for name in Self.times { if let value = member(name), Self.time(value) == nil { return nil } }
        if let value = member("token_exchange"), value.boolValue == nil { return nil }
        guard let version = member("version")?.int64Value, version <= Self.version,
            let generation = member("generation")?.int64Value, generation >= 0,
            let clientID = member("client_id")?.stringValue, !clientID.isEmpty,
            let account = member("account")?.stringValue,
            let accessToken = member("access_token")?.stringValue, !accessToken.isEmpty,
            let signedInAt = member("signed_in_at").flatMap(Self.time)
        else { return nil }
        for name in ["access_token", "refresh_token", "id_token"] {
            if let token = member(name)?.stringValue, !TokenText.isTransportable(token) { return nil }
        }
        if let additional = member("additional_tokens") {
            guard let tokens = additional.objectValue else { return nil }
            for (_, token) in tokens { guard Self.isScopedToken(token) else { return nil } }
        }
        self.account = account
        self.accessToken = accessToken
        let expiry =
            member("access_token_expires_at").flatMap(Self.time) ?? (member("refreshed_at").flatMap(Self.time) ?? signedInAt) + 3600
        expiresAt = Self.throughDate(expiry)
    }

    /// An entry of `additional_tokens` authkit reads (its `ScopedToken`), with its checks.
    private static func isScopedToken(_ value: JSONValue) -> Bool {
        guard let object = value.objectValue, let scopes = object["scopes"], isStrings(scopes) else { return false }
        if let resources = object["resources"], !resources.isNull, !isStrings(resources) { return false }
        // The first builds wrote camel-case names; authkit reads those when `access_token` is absent.
        let (tokenName, expiryName) = object["access_token"] != nil ? ("access_token", "expires_at") : ("accessToken", "expiresAt")
        guard let token = object[tokenName]?.stringValue, TokenText.isTransportable(token) else { return false }
        if let expiry = object[expiryName], !expiry.isNull, time(expiry) == nil { return false }
        return true
    }

    private static func isStrings(_ value: JSONValue) -> Bool {
        guard let array = value.arrayValue else { return false }
        return array.allSatisfy { $0.stringValue != nil }
    }

    /// A time authkit keeps: a finite number within 0 … `TokenText.latestTime`.
    private static func time(_ value: JSONValue) -> Double? {
        guard let number = value.numberValue else { return nil }
        let seconds = number.doubleValue
        guard seconds.isFinite, seconds >= 0, seconds <= TokenText.latestTime else { return nil }
        return seconds
    }

    /// `seconds` as Foundation's `Date(timeIntervalSince1970:).timeIntervalSince1970` gives it
    /// back (a `Date` counts from 2001), so both programs print the same whole second.
    private static func throughDate(_ seconds: Double) -> Double {
        (seconds - 978_307_200) + 978_307_200
    }
}

/// One item the Secret Service found among a group's token records, as the lean client read it.
package struct StoredTokenItem: Equatable {
    package var attributes: [String: String]
    package var isLocked: Bool
    /// The secret, read only from an unlocked item.
    package var secret: [UInt8]?

    package init(attributes: [String: String], isLocked: Bool, secret: [UInt8]?) {
        self.attributes = attributes
        self.isLocked = isLocked
        self.secret = secret
    }

    /// The libsecret schema authkit's items carry (`ItemSchema.name`): the store's layout,
    /// which `LeanStoreParityTests` keeps equal to SecretStore's.
    package static let schema = "io.github.authkit.Token"
    /// The schema's attributes (`ItemSchema.keyAttributes` and its format attribute).
    package static let schemaAttributes = ["group", "issuer", "client_id", "account", "kind", "format"]
    /// The `kind` of a sign-in's record.
    package static let kind = "tokens"
}

extension StoredTokenRecord {
    /// The record authkit would use among `items` (a group's token records) when the command
    /// names `account` (or none), or nil when authkit is to decide: only the plainest case, one
    /// unlocked item, sound as authkit checks it, of the account asked for. Several accounts
    /// (the group's current account), two items of one account, a locked collection (a person
    /// may be asked to unlock it), nobody signed in: authkit's.
    package static func chosen(from items: [StoredTokenItem], account: String?) -> StoredTokenRecord? {
        guard items.count == 1, let item = items.first, !item.isLocked, let secret = item.secret else { return nil }
        let attributes = item.attributes
        for name in ["issuer", "client_id", "account"] where (attributes[name] ?? "").isEmpty { return nil }
        guard attributes["kind"] == StoredTokenItem.kind, attributes["format"].map({ $0 == "1" }) ?? true else { return nil }
        if let account, attributes["account"] != account { return nil }
        return StoredTokenRecord(secret: secret)
    }
}
