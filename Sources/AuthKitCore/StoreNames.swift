/// The names of the stores a sign-in can be kept in, as `--storage` and the configuration take
/// them (the store kinds of SecretStore; a test keeps the two lists the same).
package enum StoreNames {
    package static let all = ["secret-service", "kernel-keyring", "plain-file", "encrypted-file"]
    package static let plainFile = "plain-file"
    package static let secretService = "secret-service"
}
