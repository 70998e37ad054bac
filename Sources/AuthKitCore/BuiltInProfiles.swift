/// The profiles authkit knows without a configuration file, by name: each a set of the
/// configuration file's keys (`Profile.builtIn` in AuthKit; the lean client resolves them
/// the same way).
package enum BuiltInProfiles {
    package static let all: [String: [String: String]] = [
        "microsoft": [
            "issuer": "https://login.microsoftonline.com/{tenantid}/v2.0",
            "tenant": "common",
            "scopes": "openid profile offline_access User.Read User.ReadBasic.All",
            "graph_url": "https://graph.microsoft.com/v1.0",
            // Entra app registrations for desktop apps use http://localhost (port ignored).
            "redirect_host": "localhost",
        ]
    ]
}
