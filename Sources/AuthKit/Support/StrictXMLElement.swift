/// A small, strict XML reader for the few XML documents authkit receives (AWS STS answers):
/// elements, attributes, text, the five predefined entities and character references. No
/// DTD, no external entities, no processing instructions but the declaration; at most
/// ``Limits/maximumBytes`` bytes and ``Limits/maximumDepth`` levels. Anything else is an
/// error naming the byte offset — never a guess.
package struct StrictXMLElement: Sendable, Equatable {
    /// The local name (any `prefix:` dropped).
    package var name: String
    package var attributes: [String: String]
    package var children: [StrictXMLElement]
    /// The element's own text (character data directly inside it), entities decoded.
    package var text: String

    package struct Limits: Sendable {
        package var maximumBytes = 256 << 10
        package var maximumDepth = 16
        package init() {}
    }

    package struct ParseError: Error, Sendable, CustomStringConvertible {
        package var reason: String
        package var offset: Int
        package var description: String { "not well-formed XML at byte \(offset): \(reason)" }
    }

    /// The first descendant (or self) named `name`, depth first.
    package func first(_ name: String) -> StrictXMLElement? {
        if self.name == name { return self }
        for child in children {
            if let found = child.first(name) { return found }
        }
        return nil
    }

    /// The text of the child `name`, if there is one.
    package func childText(_ name: String) -> String? {
        children.first { $0.name == name }?.text
    }

    /// The document element of `bytes`.
    package init(parsing bytes: [UInt8], limits: Limits = Limits()) throws(ParseError) {
        guard bytes.count <= limits.maximumBytes else {
            throw ParseError(reason: "the document is longer than \(limits.maximumBytes) bytes", offset: 0)
        }
        var reader = XMLReader(bytes: bytes, limits: limits)
        self = try reader.document()
    }

    init(name: String, attributes: [String: String]) {
        self.name = name
        self.attributes = attributes
        self.children = []
        self.text = ""
    }
}

private struct XMLReader {
    let bytes: [UInt8]
    let limits: StrictXMLElement.Limits
    var index = 0

    init(bytes: [UInt8], limits: StrictXMLElement.Limits) {
        self.bytes = bytes
        self.limits = limits
    }

    func error(_ reason: String) -> StrictXMLElement.ParseError { StrictXMLElement.ParseError(reason: reason, offset: index) }

    var atEnd: Bool { index >= bytes.count }

    func peek(_ text: String) -> Bool {
        let pattern = Array(text.utf8)
        return index + pattern.count <= bytes.count && Array(bytes[index..<index + pattern.count]) == pattern
    }

    mutating func skipSpace() {
        while !atEnd, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
    }

    mutating func skip(past terminator: String) throws(StrictXMLElement.ParseError) {
        let pattern = Array(terminator.utf8)
        while index + pattern.count <= bytes.count {
            if Array(bytes[index..<index + pattern.count]) == pattern {
                index += pattern.count
                return
            }
            index += 1
        }
        throw error("unterminated construct (no \(terminator))")
    }

    /// Comments and whitespace between top-level constructs.
    mutating func skipMisc() throws(StrictXMLElement.ParseError) {
        while true {
            skipSpace()
            if peek("<!--") { try skip(past: "-->") } else { return }
        }
    }

    mutating func document() throws(StrictXMLElement.ParseError) -> StrictXMLElement {
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { index = 3 }
        if peek("<?xml") { try skip(past: "?>") }
        try skipMisc()
        guard !peek("<!DOCTYPE"), !peek("<!doctype") else { throw error("a DOCTYPE is not accepted") }
        guard peek("<") else { throw error("no document element") }
        let root = try element(depth: 1)
        try skipMisc()
        guard atEnd else { throw error("content after the document element") }
        return root
    }

    mutating func name() throws(StrictXMLElement.ParseError) -> String {
        let start = index
        while !atEnd {
            let byte = bytes[index]
            let isNameByte =
                (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x30 && byte <= 0x39)
                || byte == 0x5F || byte == 0x2D || byte == 0x2E || byte == 0x3A || byte >= 0x80
            guard isNameByte else { break }
            index += 1
        }
        guard index > start, let text = String(validating: bytes[start..<index], as: UTF8.self) else { throw error("a name was expected") }
        return text
    }

    static func local(_ name: String) -> String {
        name.split(separator: ":").last.map(String.init) ?? name
    }

    mutating func element(depth: Int) throws(StrictXMLElement.ParseError) -> StrictXMLElement {
        guard depth <= limits.maximumDepth else { throw error("nested deeper than \(limits.maximumDepth) levels") }
        index += 1  // <
        let qualified = try name()
        var attributes: [String: String] = [:]
        while true {
            skipSpace()
            guard !atEnd else { throw error("unterminated start tag") }
            if peek("/>") {
                index += 2
                return StrictXMLElement(name: Self.local(qualified), attributes: attributes)
            }
            if peek(">") {
                index += 1
                break
            }
            let attribute = try name()
            skipSpace()
            guard peek("=") else { throw error("an attribute without a value") }
            index += 1
            skipSpace()
            guard !atEnd, bytes[index] == 0x22 || bytes[index] == 0x27 else { throw error("an unquoted attribute value") }
            let quote = bytes[index]
            index += 1
            let value = try characters(until: quote)
            index += 1
            guard attributes[attribute] == nil else { throw error("the attribute \(attribute) appears twice") }
            attributes[attribute] = value
        }
        var element = StrictXMLElement(name: Self.local(qualified), attributes: attributes)
        while true {
            guard !atEnd else { throw error("the element \(qualified) is not closed") }
            if peek("</") {
                index += 2
                let closing = try name()
                skipSpace()
                guard closing == qualified, peek(">") else { throw error("</\(closing)> closes <\(qualified)>") }
                index += 1
                return element
            }
            if peek("<!--") {
                try skip(past: "-->")
            } else if peek("<![CDATA[") {
                index += 9
                let start = index
                try skip(past: "]]>")
                guard let text = String(validating: bytes[start..<index - 3], as: UTF8.self) else { throw error("CDATA is not UTF-8") }
                element.text += text
            } else if peek("<!") || peek("<?") {
                throw error("a declaration or processing instruction inside an element")
            } else if peek("<") {
                element.children.append(try self.element(depth: depth + 1))
            } else {
                element.text += try characters(until: 0x3C)
            }
        }
    }

    /// Character data up to (not including) `terminator`, entities decoded.
    mutating func characters(until terminator: UInt8) throws(StrictXMLElement.ParseError) -> String {
        var output: [UInt8] = []
        while !atEnd && bytes[index] != terminator {
            let byte = bytes[index]
            if byte == 0x26 {  // &
                guard let end = bytes[index...].firstIndex(of: 0x3B), end - index <= 12,
                    let reference = String(validating: bytes[(index + 1)..<end], as: UTF8.self)
                else { throw error("an unterminated entity reference") }
                switch reference {
                case "lt": output.append(0x3C)
                case "gt": output.append(0x3E)
                case "amp": output.append(0x26)
                case "quot": output.append(0x22)
                case "apos": output.append(0x27)
                default:
                    let number: UInt32?
                    if reference.hasPrefix("#x") {
                        number = UInt32(reference.dropFirst(2), radix: 16)
                    } else if reference.hasPrefix("#") {
                        number = UInt32(reference.dropFirst(1))
                    } else {
                        throw error("the entity &\(reference); is not one of XML's five")
                    }
                    guard let number, number != 0, let scalar = Unicode.Scalar(number) else {
                        throw error("an invalid character reference")
                    }
                    output.append(contentsOf: Array(String(Character(scalar)).utf8))
                }
                index = end + 1
                continue
            }
            guard byte != 0x3C || terminator == 0x3C else { throw error("‘<’ in an attribute value") }
            output.append(byte)
            index += 1
        }
        guard !atEnd else { throw error("the document ends inside text") }
        guard let text = String(validating: output, as: UTF8.self) else { throw error("text that is not UTF-8") }
        return text
    }
}
