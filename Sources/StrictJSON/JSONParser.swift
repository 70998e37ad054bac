extension JSONValue {
    /// Parses one JSON document, strictly (RFC 8259).
    ///
    /// Refused, each with a reason and byte offset (never the content): duplicate member names,
    /// anything after the value but whitespace, a byte-order mark, invalid UTF-8, lone
    /// surrogate escapes, unescaped control characters, leading zeros, `NaN`, comments, and
    /// documents beyond `limits`: each throws a ``JSONError``.
    @inlinable  // specialized in the caller's module for the buffers it passes (JOSE: a scratch buffer)
    public init(parsing bytes: some Collection<UInt8>, limits: JSONLimits = .default) throws(JSONError) {
        guard bytes.count <= limits.maximumBytes else {
            throw JSONError(reason: "the document is longer than \(limits.maximumBytes) bytes")
        }
        let depth = limits.maximumDepth
        // Contiguous storage is read in place; anything else is copied once.
        let result =
            bytes.withContiguousStorageIfAvailable { JSONParser.parse($0, maximumDepth: depth) }
            ?? Array(bytes).withUnsafeBufferPointer { JSONParser.parse($0, maximumDepth: depth) }
        self = try result.get()
    }

    /// Parses one JSON document from text; see ``init(parsing:limits:)-(Collection<UInt8>,_)``.
    public init(parsing text: some StringProtocol, limits: JSONLimits = .default) throws(JSONError) {
        try self.init(parsing: text.utf8, limits: limits)
    }
}

/// A recursive-descent parser over a byte buffer. Recursion is bounded by `maximumDepth`.
@usableFromInline
struct JSONParser {
    private let bytes: UnsafeBufferPointer<UInt8>
    private let maximumDepth: Int
    private var index = 0
    private var depth = 0

    /// Numbers longer than this are refused: no NumericDate or id needs them, and it keeps
    /// hostile input from making the number conversions slow.
    static let maximumNumberLength = 256

    private init(bytes: UnsafeBufferPointer<UInt8>, maximumDepth: Int) {
        self.bytes = bytes
        self.maximumDepth = maximumDepth
    }

    @usableFromInline
    static func parse(_ bytes: UnsafeBufferPointer<UInt8>, maximumDepth: Int) -> Result<JSONValue, JSONError> {
        var parser = JSONParser(bytes: bytes, maximumDepth: maximumDepth)
        do throws(JSONError) {
            return .success(try parser.parseDocument())
        } catch {
            return .failure(error)
        }
    }

    private mutating func parseDocument() throws(JSONError) -> JSONValue {
        skipWhitespace()
        guard index < bytes.count else { throw JSONError(reason: "the document is empty") }
        let value = try parseValue()
        skipWhitespace()
        guard index == bytes.count else { throw failure("unexpected text after the value") }
        return value
    }

    private func failure(_ reason: String) -> JSONError {
        JSONError(reason: "\(reason) at byte \(index)", byteOffset: index)
    }

    @inline(__always)
    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    private mutating func parseValue() throws(JSONError) -> JSONValue {
        guard index < bytes.count else { throw failure("unexpected end of the document") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try expectLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try expectLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try expectLiteral("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try parseNumber())
        default: throw failure("unexpected character")
        }
    }

    private mutating func expectLiteral(_ literal: StaticString) throws(JSONError) {
        let length = literal.utf8CodeUnitCount
        guard bytes.count - index >= length else { throw failure("unknown literal") }
        let matches = literal.withUTF8Buffer { expected in
            for offset in 0..<length where bytes[index + offset] != expected[offset] { return false }
            return true
        }
        guard matches else { throw failure("unknown literal") }
        index += length
    }

    private mutating func parseNumber() throws(JSONError) -> JSONNumber {
        let start = index
        guard JSONNumber.scan(bytes, &index) else { throw failure("malformed number") }
        guard index - start <= JSONParser.maximumNumberLength else {
            throw failure("number longer than \(JSONParser.maximumNumberLength) characters")
        }
        return JSONNumber(validatedText: String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self))
    }

    private mutating func parseString() throws(JSONError) -> String {
        index += 1  // the opening quote
        let start = index
        var sawNonASCII = false
        // Eight bytes at a time while none of them is a quote, a backslash or a control
        // character (SWAR: the usual "has a zero byte" bit tricks, exact for these tests).
        if let base = bytes.baseAddress {
            let raw = UnsafeRawPointer(base)
            var highBits: UInt64 = 0
            while index + 8 <= bytes.count {
                let word = raw.loadUnaligned(fromByteOffset: index, as: UInt64.self)
                let quote = word ^ 0x2222_2222_2222_2222
                let backslash = word ^ 0x5C5C_5C5C_5C5C_5C5C
                let special =
                    ((quote &- 0x0101_0101_0101_0101) & ~quote)
                    | ((backslash &- 0x0101_0101_0101_0101) & ~backslash)
                    | ((word &- 0x2020_2020_2020_2020) & ~word)
                if special & 0x8080_8080_8080_8080 != 0 { break }
                highBits |= word
                index += 8
            }
            sawNonASCII = highBits & 0x8080_8080_8080_8080 != 0
        }
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let content = UnsafeBufferPointer(rebasing: bytes[start..<index])
                index += 1
                if !sawNonASCII { return String(decoding: content, as: UTF8.self) }
                guard let string = String(validating: content, as: UTF8.self) else {
                    throw failure("invalid UTF-8 in a string")
                }
                return string
            }
            if byte == UInt8(ascii: "\\") { return try parseEscapedString(from: start) }
            if byte < 0x20 { throw failure("unescaped control character in a string") }
            if byte >= 0x80 { sawNonASCII = true }
            index += 1
        }
        throw failure("unterminated string")
    }

    /// The slow path of ``parseString()``, from the first backslash on.
    private mutating func parseEscapedString(from start: Int) throws(JSONError) -> String {
        var utf8 = [UInt8](UnsafeBufferPointer(rebasing: bytes[start..<index]))
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                guard let string = String(validating: utf8, as: UTF8.self) else {
                    throw failure("invalid UTF-8 in a string")
                }
                return string
            case UInt8(ascii: "\\"):
                index += 1
                guard index < bytes.count else { throw failure("unterminated string") }
                let escape = bytes[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""): utf8.append(0x22)
                case UInt8(ascii: "\\"): utf8.append(0x5C)
                case UInt8(ascii: "/"): utf8.append(0x2F)
                case UInt8(ascii: "b"): utf8.append(0x08)
                case UInt8(ascii: "f"): utf8.append(0x0C)
                case UInt8(ascii: "n"): utf8.append(0x0A)
                case UInt8(ascii: "r"): utf8.append(0x0D)
                case UInt8(ascii: "t"): utf8.append(0x09)
                case UInt8(ascii: "u"): utf8.append(contentsOf: try parseUnicodeEscape())
                default:
                    index -= 1
                    throw failure("unknown escape sequence")
                }
            default:
                if byte < 0x20 { throw failure("unescaped control character in a string") }
                utf8.append(byte)
                index += 1
            }
        }
        throw failure("unterminated string")
    }

    /// Reads the `XXXX` of a `\uXXXX` escape (and a following low surrogate when the first is a
    /// high one); returns the scalar's UTF-8. Lone surrogates cannot be a Swift `String`: refused.
    private mutating func parseUnicodeEscape() throws(JSONError) -> String.UTF8View {
        let first = try readHex4()
        var scalarValue = UInt32(first)
        if (0xD800...0xDBFF).contains(first) {
            guard bytes.count - index >= 6, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                throw failure("lone surrogate in a \\u escape")
            }
            index += 2
            let second = try readHex4()
            guard (0xDC00...0xDFFF).contains(second) else { throw failure("lone surrogate in a \\u escape") }
            scalarValue = 0x10000 + ((UInt32(first) - 0xD800) << 10) + (UInt32(second) - 0xDC00)
        } else if (0xDC00...0xDFFF).contains(first) {
            throw failure("lone surrogate in a \\u escape")
        }
        guard let scalar = Unicode.Scalar(scalarValue) else { throw failure("invalid \\u escape") }
        return String(Character(scalar)).utf8
    }

    private mutating func readHex4() throws(JSONError) -> UInt16 {
        guard bytes.count - index >= 4 else { throw failure("truncated \\u escape") }
        var value: UInt16 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw failure("invalid \\u escape")
            }
            value = value << 4 | UInt16(digit)
            index += 1
        }
        return value
    }

    private mutating func enterContainer() throws(JSONError) {
        depth += 1
        guard depth <= maximumDepth else { throw failure("nested deeper than \(maximumDepth) levels") }
    }

    private mutating func parseArray() throws(JSONError) -> JSONValue {
        try enterContainer()
        index += 1  // [
        var elements: [JSONValue] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            depth -= 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            elements.append(try parseValue())
            skipWhitespace()
            guard index < bytes.count else { throw failure("unterminated array") }
            let byte = bytes[index]
            index += 1
            if byte == UInt8(ascii: ",") { continue }
            if byte == UInt8(ascii: "]") { break }
            index -= 1
            throw failure("expected , or ] in an array")
        }
        depth -= 1
        return .array(elements)
    }

    /// A member name as an error shows it: only a name that looks like a protocol field (1 to
    /// 40 of A-Z a-z 0-9 _ - . : #) is named, so the message says which field was doubled
    /// (`access_token`) while a name that could carry data or control characters is not repeated.
    static func shown(_ name: String) -> String {
        let plain =
            !name.isEmpty && name.utf8.count <= 40
            && name.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                    UInt8(ascii: "_"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: ":"), UInt8(ascii: "#"):
                    return true
                default: return false
                }
            }
        return plain ? "‘\(name)’" : "(not shown)"
    }

    /// Below this many members, duplicates are found by comparing the names; above, with a set.
    private static let linearDuplicateCheckLimit = 64

    private mutating func parseObject() throws(JSONError) -> JSONValue {
        try enterContainer()
        index += 1  // {
        var members: [JSONObject.Element] = []
        // Most objects authkit reads have a handful of members: one allocation instead of growing 1, 2, 4.
        members.reserveCapacity(8)
        var names = Set<String>()
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            depth -= 1
            return .object(JSONObject(uniqueMembers: members))
        }
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else {
                throw failure("expected a member name in an object")
            }
            let nameOffset = index
            let name = try parseString()
            let duplicate: Bool
            if members.count < JSONParser.linearDuplicateCheckLimit {
                duplicate = members.contains { $0.key == name }
            } else {
                // Past a few dozen members a set keeps the check linear on hostile input.
                if names.isEmpty { names = Set(members.map { $0.key }) }
                duplicate = !names.insert(name).inserted
            }
            if duplicate {
                index = nameOffset
                throw failure("duplicate member name \(JSONParser.shown(name))")
            }
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else {
                throw failure("expected : after a member name")
            }
            index += 1
            skipWhitespace()
            let value = try parseValue()
            members.append((name, value))
            skipWhitespace()
            guard index < bytes.count else { throw failure("unterminated object") }
            let byte = bytes[index]
            index += 1
            if byte == UInt8(ascii: ",") { continue }
            if byte == UInt8(ascii: "}") { break }
            index -= 1
            throw failure("expected , or } in an object")
        }
        depth -= 1
        return .object(JSONObject(uniqueMembers: members))
    }
}
