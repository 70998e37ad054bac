extension JSONValue {
    /// How ``serialized(options:)`` writes a value.
    public struct SerializationOptions: OptionSet, Sendable {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }

        /// Members sorted by name (UTF-8 byte order) instead of document order.
        public static let sortedKeys = SerializationOptions(rawValue: 1 << 0)
        /// Newlines and two-space indentation.
        public static let prettyPrinted = SerializationOptions(rawValue: 1 << 1)
    }

    /// The value as JSON text.
    ///
    /// Strings are escaped so the output is safe to show on a terminal: C0 and C1 control
    /// characters and DEL become `\u` escapes (a claim cannot move the cursor or recolour the
    /// screen), as do U+2028 and U+2029 and the bidirectional controls (U+200E, U+200F,
    /// U+202A…U+202E, U+2066…U+2069).
    public func serialized(options: SerializationOptions = []) -> String {
        String(decoding: serializedBytes(options: options), as: UTF8.self)
    }

    /// The value as JSON text in UTF-8; see ``serialized(options:)``.
    public func serializedBytes(options: SerializationOptions = []) -> [UInt8] {
        var writer = JSONWriter(options: options)
        writer.write(self, indent: 0)
        return writer.output
    }
}

private struct JSONWriter {
    let options: JSONValue.SerializationOptions
    var output: [UInt8] = []

    init(options: JSONValue.SerializationOptions) {
        self.options = options
        output.reserveCapacity(256)
    }

    mutating func write(_ value: JSONValue, indent: Int) {
        switch value {
        case .null: output.append(contentsOf: "null".utf8)
        case .bool(let flag): output.append(contentsOf: (flag ? "true" : "false").utf8)
        case .number(let number): output.append(contentsOf: number.text.utf8)
        case .string(let string): writeString(string)
        case .array(let elements):
            guard !elements.isEmpty else {
                output.append(contentsOf: "[]".utf8)
                return
            }
            output.append(UInt8(ascii: "["))
            for (position, element) in elements.enumerated() {
                if position > 0 { output.append(UInt8(ascii: ",")) }
                newline(indent: indent + 1)
                write(element, indent: indent + 1)
            }
            newline(indent: indent)
            output.append(UInt8(ascii: "]"))
        case .object(let object):
            guard !object.isEmpty else {
                output.append(contentsOf: "{}".utf8)
                return
            }
            var members = Array(object)
            if options.contains(.sortedKeys) {
                members.sort { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
            }
            output.append(UInt8(ascii: "{"))
            for (position, member) in members.enumerated() {
                if position > 0 { output.append(UInt8(ascii: ",")) }
                newline(indent: indent + 1)
                writeString(member.key)
                output.append(UInt8(ascii: ":"))
                if options.contains(.prettyPrinted) { output.append(UInt8(ascii: " ")) }
                write(member.value, indent: indent + 1)
            }
            newline(indent: indent)
            output.append(UInt8(ascii: "}"))
        }
    }

    mutating func newline(indent: Int) {
        guard options.contains(.prettyPrinted) else { return }
        output.append(0x0A)
        output.append(contentsOf: repeatElement(UInt8(ascii: " "), count: indent * 2))
    }

    mutating func writeString(_ string: String) {
        output.append(UInt8(ascii: "\""))
        let utf8 = Array(string.utf8)
        var index = 0
        while index < utf8.count {
            let byte = utf8[index]
            switch byte {
            case UInt8(ascii: "\""): output.append(contentsOf: #"\""#.utf8)
            case UInt8(ascii: "\\"): output.append(contentsOf: #"\\"#.utf8)
            case 0x0A: output.append(contentsOf: #"\n"#.utf8)
            case 0x0D: output.append(contentsOf: #"\r"#.utf8)
            case 0x09: output.append(contentsOf: #"\t"#.utf8)
            case 0x08: output.append(contentsOf: #"\b"#.utf8)
            case 0x0C: output.append(contentsOf: #"\f"#.utf8)
            case 0x00..<0x20, 0x7F: writeUnicodeEscape(UInt16(byte))
            case 0xC2 where index + 1 < utf8.count && (0x80...0x9F).contains(utf8[index + 1]):
                // A C1 control character (U+0080…U+009F), which some terminals obey.
                writeUnicodeEscape(UInt16(utf8[index + 1]))
                index += 1
            case 0xE2 where index + 2 < utf8.count && Self.isEscapedFormatCharacter(utf8[index + 1], utf8[index + 2]):
                // U+2028 and U+2029 (line breaks to JavaScript and to some viewers) and the
                // bidirectional controls U+200E/F, U+202A…U+202E and U+2066…U+2069, which can
                // make a terminal show text in another order than it is (CVE-2021-42574).
                writeUnicodeEscape(0x2000 | UInt16(utf8[index + 1] & 0x0F) << 6 | UInt16(utf8[index + 2] & 0x3F))
                index += 2
            default: output.append(byte)
            }
            index += 1
        }
        output.append(UInt8(ascii: "\""))
    }

    /// The second and third UTF-8 bytes of U+200E, U+200F, U+2028, U+2029, U+202A…U+202E and
    /// U+2066…U+2069 (all start with 0xE2).
    static func isEscapedFormatCharacter(_ second: UInt8, _ third: UInt8) -> Bool {
        switch (second, third) {
        case (0x80, 0x8E...0x8F), (0x80, 0xA8...0xAE), (0x81, 0xA6...0xA9): return true
        default: return false
        }
    }

    mutating func writeUnicodeEscape(_ value: UInt16) {
        let hex = Array("0123456789abcdef".utf8)
        output.append(contentsOf: #"\u"#.utf8)
        output.append(hex[Int(value >> 12 & 0xF)])
        output.append(hex[Int(value >> 8 & 0xF)])
        output.append(hex[Int(value >> 4 & 0xF)])
        output.append(hex[Int(value & 0xF)])
    }
}
