/// Group names as a configuration, a flag or `AUTHKIT_GROUP` may give them: reverse-DNS
/// style, ASCII letters, digits, `.`, `_` and `-`, at most 255 bytes.
package enum GroupName {
    /// The group used when nothing names one.
    package static let defaultGroup = "authkit"

    package static func isValid(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 255
            && name.utf8.allSatisfy { byte in
                (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte)
                    || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
            }
    }

    /// A name the stores take (SecretStore's `SecretGroup`): valid, and starting with a letter
    /// or digit.
    package static func isStoreName(_ name: String) -> Bool {
        guard isValid(name), let first = name.utf8.first else { return false }
        return (0x41...0x5A).contains(first) || (0x61...0x7A).contains(first) || (0x30...0x39).contains(first)
    }
}
