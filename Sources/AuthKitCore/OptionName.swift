/// The long names of the options that name a sign-in and a token, declared once: `authkit`'s
/// ArgumentParser declarations, its fast paths and the lean client read the same names.
package enum OptionName {
    package static let profile = "profile"
    package static let group = "group"
    package static let storage = "storage"
    package static let account = "account"
    package static let insecureStorage = "insecure-storage"
    package static let scope = "scope"
    package static let resource = "resource"
    package static let minTTL = "min-ttl"
}
