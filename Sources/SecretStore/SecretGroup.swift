/// A group name: tools that name the same group share one sign-in, like an Apple keychain
/// access group.
///
/// A group is reverse-DNS-like (`com.example.shared`): 1–255 characters, ASCII letters,
/// digits, `.`, `-` and `_`, starting with a letter or digit. It becomes the label of the
/// Secret Service collection that holds the group's items, the `group` attribute of every
/// item, and (for the plain-file store) a file name — hence the narrow alphabet.
public struct SecretGroup: Sendable, Hashable, CustomStringConvertible {
    /// The validated name, e.g. `com.example.shared`.
    public let name: String

    /// Validates `name`.
    /// - Throws: ``SecretStoreError/invalidGroup(_:reason:)`` for an empty or over-long name,
    ///   or one with characters outside the allowed set (spaces, `/` …).
    public init(_ name: String) throws(SecretStoreError) {
        let bytes = Array(name.utf8)
        guard !bytes.isEmpty else {
            throw .invalidGroup(name, reason: "the group name is empty")
        }
        guard bytes.count <= 255 else {
            throw .invalidGroup(String(name.prefix(40)) + "…", reason: "the group name is longer than 255 characters")
        }
        for byte in bytes where !Self.isAllowed(byte) {
            throw .invalidGroup(
                name,
                reason: "only ASCII letters, digits, '.', '-' and '_' are allowed (found \(Self.describe(byte)))")
        }
        guard Self.isAlphanumeric(bytes[0]) else {
            throw .invalidGroup(name, reason: "the group name must start with a letter or digit")
        }
        self.name = name
    }

    public var description: String { name }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
    }

    private static func isAllowed(_ byte: UInt8) -> Bool {
        isAlphanumeric(byte) || byte == 0x2E || byte == 0x2D || byte == 0x5F
    }

    private static func describe(_ byte: UInt8) -> String {
        switch byte {
        case 0x20: return "a space"
        case 0x2F: return "'/'"
        case 0x21...0x7E: return "'\(Character(Unicode.Scalar(byte)))'"
        default: return "a control or non-ASCII character"
        }
    }
}
