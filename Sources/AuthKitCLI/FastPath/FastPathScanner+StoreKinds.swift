import AuthKit
import AuthKitCore

extension FastPathScanner {
    /// A scanner of `arguments` from `index` that knows every store authkit knows.
    init(authkitArguments arguments: [String], index: Int) {
        self.init(arguments: arguments, index: index) { StorageChoice(rawValue: $0) != nil }
    }
}

extension FastPathOptions {
    /// The options over `selector` (its store given as `--storage` would give it).
    init(selector: SignInSelector, scopes: [String], resources: [String], minTTL: Int) {
        self.init(minTTL: minTTL)
        self.selector = selector
        self.scopes = scopes
        self.resources = resources
    }

    /// The sign-in these options name.
    var selector: SignInSelector {
        get {
            var selector = SignInSelector()
            selector.profile = profile
            selector.group = group
            selector.account = account
            selector.insecureStorage = insecureStorage
            selector.storage = storage.flatMap(StorageChoice.init(rawValue:))
            return selector
        }
        set {
            profile = newValue.profile
            group = newValue.group
            account = newValue.account
            insecureStorage = newValue.insecureStorage
            storage = newValue.storage?.rawValue
        }
    }
}
