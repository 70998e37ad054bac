/// What the stores say of the names a configuration file gives them: which group names they
/// take, and which stores there are. authkit's rules know the stores added at run time
/// (`StoreKinds`); the lean client's, ``leanClient``, know the built-in ones by name alone.
package struct StoreRules {
    /// What is wrong with a group name (nil: nothing).
    package var groupProblem: (String) -> String?
    /// The stores' names, in the order a message lists them.
    package var stores: [String]

    package init(groupProblem: @escaping (String) -> String?, stores: [String]) {
        self.groupProblem = groupProblem
        self.stores = stores
    }

    /// The built-in stores, judged from the names alone: a file they pass, authkit passes too.
    package static var leanClient: StoreRules {
        StoreRules(groupProblem: { GroupName.isStoreName($0) ? nil : "not a group the stores take" }, stores: StoreNames.all)
    }
}
