/// Profile names: letters, digits, `.`, `_`, `-`.
package enum ProfileName {
    package static func isValid(_ name: String) -> Bool {
        !name.isEmpty && name.count <= 64
            && name.unicodeScalars.allSatisfy { scalar in
                (scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar)))
                    || "._-".unicodeScalars.contains(scalar)
            }
    }
}
