/// The options `token` and the credential plug-ins share, as their fast paths parse them.
package struct FastPathOptions: Equatable {
    package var profile: String?
    package var group: String?
    package var account: String?
    package var insecureStorage = false
    /// A store's name, one of ``StoreNames/all``.
    package var storage: String?
    package var scopes: [String] = []
    package var resources: [String] = []
    package var minTTL: Int

    /// `--min-ttl`'s range, in seconds.
    package static let minTTLRange = 0...86_400
    /// `authkit token`'s `--min-ttl` when none is given.
    package static let tokenMinTTL = 60
    /// The credential plug-ins' `--min-ttl` when none is given: a client may take a while to
    /// use the token it was given.
    package static let pluginMinTTL = 300

    package init(minTTL: Int) {
        self.minTTL = minTTL
    }
}
