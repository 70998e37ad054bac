// FoundationEssentials has no `trimmingCharacters(in:)`; protocol text only needs ASCII
// whitespace (SP, HTAB, CR, LF) trimmed.
extension StringProtocol {
    /// The text without leading and trailing ASCII spaces, tabs, CRs and LFs.
    package func trimmingASCIIWhitespace() -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" || $0 == "\n" || $0 == "\r\n" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) })
        else { return "" }
        return String(self[first...last])
    }
}

extension StringProtocol {
    /// The lines of a text file: split at each LF, CRLF or lone CR. (Swift keeps `"\r\n"` as
    /// one `Character`, so a split at `"\n"` alone never splits there, and a file written on
    /// Windows would read as one line; a lone CR would let a comment hide what follows it.)
    package func textLines() -> [SubSequence] {
        split(omittingEmptySubsequences: false) { $0 == "\n" || $0 == "\r\n" || $0 == "\r" }
    }
}

extension String {
    /// The text without the leading and trailing characters in `set`.
    package func trimmingCharacters(in set: String) -> String {
        var scalars = Substring(self)
        while let first = scalars.first, set.contains(first) { scalars.removeFirst() }
        while let last = scalars.last, set.contains(last) { scalars.removeLast() }
        return String(scalars)
    }
}
