/// Why a document is not strict JSON (RFC 8259), or is beyond the ``JSONLimits`` it was read with.
///
/// The reason names what is wrong and, where there is one, the byte offset where it was
/// found; never any of the document's content. Callers parse tokens, key sets and stored
/// secrets, so an error that quoted its input could carry a secret into a log or a terminal.
public struct JSONError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong, ending with the position when there is one: `duplicate member name at
    /// byte 26`, `the document is empty`.
    public let reason: String
    /// The byte offset the reason refers to, or `nil` when the document as a whole is refused
    /// (empty, longer than the limit).
    public let byteOffset: Int?

    /// An error with `reason`, which must not contain the document's content.
    public init(reason: String, byteOffset: Int? = nil) {
        self.reason = reason
        self.byteOffset = byteOffset
    }

    /// The reason after `not valid JSON:`; callers say which document it was and what to do.
    public var description: String { "not valid JSON: \(reason)" }
}
