/// Profile names: letters, digits, `.`, `_`, `-`.
package enum ProfileName {
    package static func isValid(_ name: String) -> Bool {
        !name.isEmpty && name.count <= 64
            && name.utf8.allSatisfy { byte in
                (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte)
                    || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
            }
    }
}
