import AuthKit

/// The commit this binary was built from, for `authkit --version`. `scripts/package` writes
/// the commit into its own exported copy of the source before it builds; in the repository it
/// stays nil, so a plain `swift build` neither needs git nor changes a tracked file.
enum BuildCommit {
    static let id: String? = nil

    /// `0.1.0 (commit 1a2b3c4d5e6f)`, or `0.1.0 (unknown commit: not built by scripts/package)`.
    static var version: String {
        AuthKitVersion.current + " (" + (id.map { "commit " + $0 } ?? "unknown commit: not built by scripts/package") + ")"
    }
}
