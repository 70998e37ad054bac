/// A directory user as Graph returns it with the fields authkit selects.
public struct GraphUser: Sendable, Equatable, Codable {
    public var id: String?
    public var displayName: String?
    public var userPrincipalName: String?
    public var mail: String?
    public var businessPhones: [String]
    public var mobilePhone: String?

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
