/// The version of authkit, shown by `authkit --version` and sent in `User-Agent`.
public enum AuthKitVersion {
    public static let current = "0.1.0"
}
