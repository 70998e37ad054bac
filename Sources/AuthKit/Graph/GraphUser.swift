/// A directory user as Graph returns it with the fields authkit selects.
public struct GraphUser: Sendable, Equatable, Codable {
    /// The directory object id.
    public var id: String?
    /// The name to show.
    public var displayName: String?
    /// The sign-in name (`ada@contoso.com`).
    public var userPrincipalName: String?
    /// The mail address, if the user has one.
    public var mail: String?
    /// Office phone numbers.
    public var businessPhones: [String]
    /// The mobile number, if any.
    public var mobilePhone: String?

    /// A user with these fields (`nil` where the directory has no value).
    public init(
        id: String? = nil, displayName: String?, userPrincipalName: String?, mail: String?,
        businessPhones: [String] = [], mobilePhone: String?
    ) {
        self.id = id
        self.displayName = displayName
        self.userPrincipalName = userPrincipalName
        self.mail = mail
        self.businessPhones = businessPhones
        self.mobilePhone = mobilePhone
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decodeIfPresent(String.self, forKey: .id)
        displayName = try container.decodeIfPresent(String.self, forKey: .displayName)
        userPrincipalName = try container.decodeIfPresent(String.self, forKey: .userPrincipalName)
        mail = try container.decodeIfPresent(String.self, forKey: .mail)
        businessPhones = try container.decodeIfPresent([String].self, forKey: .businessPhones) ?? []
        mobilePhone = try container.decodeIfPresent(String.self, forKey: .mobilePhone)
    }

    /// The fields requested with `$select`.
    public static let selectedFields = ["displayName", "userPrincipalName", "mail", "businessPhones", "mobilePhone"]
}
