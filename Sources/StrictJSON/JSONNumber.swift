/// A JSON number, kept as the exact text of the document (RFC 8259 grammar).
///
/// Keeping the text means nothing is rounded on the way through: a NumericDate, a 64-bit id
/// or a decimal is read exactly when asked for, and written back unchanged. Two numbers are
/// equal when their texts are (`1` and `1.0` differ).
public struct JSONNumber: Sendable, Hashable, CustomStringConvertible {
    /// The number as written, for example `1470148361` or `1.5e9`.
    public let text: String

    /// A number from an integer.
    public init(_ value: Int64) { text = String(value) }

    /// A number from an integer.
    public init(_ value: Int) { text = String(value) }

    /// A number from an unsigned integer (a Unix time a store keeps as `UInt64`).
    public init(_ value: UInt64) { text = String(value) }

    /// A number from a finite `Double`; `nil` for infinities and NaN, which JSON cannot carry.
    public init?(_ value: Double) {
        guard value.isFinite else { return nil }
        if value == value.rounded(), abs(value) < 9.0e15 {
            text = String(Int64(value))
        } else {
            text = "\(value)"
        }
    }

    /// A number from text the parser has already checked against the RFC 8259 grammar.
    init(validatedText: String) { text = validatedText }

    /// A number from text, when the text follows the RFC 8259 grammar.
    public init?(text: String) {
        guard JSONNumber.isValid(Array(text.utf8)) else { return nil }
        self.text = text
    }

    /// The value as an integer when it is integral and fits (`1.5e9` gives 1500000000;
    /// `1.5` gives `nil`).
    public var int64Value: Int64? {
        if let exact = Int64(text) { return exact }
        guard let value = Double(text), value.isFinite, value == value.rounded(),
            value >= -9.223372036854775e18, value <= 9.223372036854775e18
        else { return nil }
        return Int64(value)
    }

    /// The value as a `Double` (rounded to the nearest; huge exponents give ±infinity).
    public var doubleValue: Double { Double(text) ?? .nan }

    public var description: String { text }

    /// Whether `bytes` is exactly one number in the RFC 8259 grammar:
    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
    static func isValid(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBufferPointer { buffer in
            var index = 0
            return scan(buffer, &index) && index == buffer.count
        }
    }

    /// Advances `index` over one number in the RFC 8259 grammar; false when there is none.
    static func scan(_ bytes: UnsafeBufferPointer<UInt8>, _ index: inout Int) -> Bool {
        @inline(__always) func isDigit(_ i: Int) -> Bool {
            i < bytes.count && bytes[i] >= UInt8(ascii: "0") && bytes[i] <= UInt8(ascii: "9")
        }
        var i = index
        if i < bytes.count, bytes[i] == UInt8(ascii: "-") { i += 1 }
        guard isDigit(i) else { return false }
        if bytes[i] == UInt8(ascii: "0") {
            i += 1
        } else {
            while isDigit(i) { i += 1 }
        }
        if i < bytes.count, bytes[i] == UInt8(ascii: ".") {
            i += 1
            guard isDigit(i) else { return false }
            while isDigit(i) { i += 1 }
        }
        if i < bytes.count, bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E") {
            i += 1
            if i < bytes.count, bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") { i += 1 }
            guard isDigit(i) else { return false }
            while isDigit(i) { i += 1 }
        }
        index = i
        return true
    }
}

extension JSONNumber: ExpressibleByIntegerLiteral {
    public init(integerLiteral value: Int64) { self.init(value) }
}
