/// What a credential plug-in takes on standard input: the whole request a client sends in one
/// go, bounded, as text. Checked the same way by `authkit credential` and the lean client.
package enum CredentialInput {
    /// Everything a credential client could send in one request is far below this.
    package static let maximumBytes = 64 * 1024
    /// The longest line of a request.
    package static let maximumLineBytes = 16 * 1024

    /// Why `bytes` is not a request a plug-in reads.
    package enum Problem: Error, Equatable {
        case tooLong
        case nul
        case notUTF8
        case longLine
    }

    /// The request as text, or why it is not one.
    package static func text(_ bytes: [UInt8]) -> Result<String, Problem> {
        guard bytes.count <= maximumBytes else { return .failure(.tooLong) }
        guard !bytes.contains(0) else { return .failure(.nul) }
        guard let text = String(validating: bytes, as: UTF8.self) else { return .failure(.notUTF8) }
        // (Swift reads CRLF as one character, which a split at "\n" alone would not split at.)
        let lines = text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" })
        if lines.contains(where: { $0.utf8.count > maximumLineBytes }) {
            return .failure(.longLine)
        }
        return .success(text)
    }
}
