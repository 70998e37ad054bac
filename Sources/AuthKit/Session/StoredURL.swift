#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A URL a stored record names (its token, key-set, revocation and Graph endpoints): a string
/// in the record, an absolute http(s) URL once read — a record naming anything else does not
/// decode, so nothing later has to guess a replacement.
package struct StoredURL: Sendable, Equatable, Codable, CustomStringConvertible {
    package let url: URL

    package init(_ url: URL) { self.url = url }

    package init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let url = URL(string: text), url.scheme == "https" || url.scheme == "http", url.host != nil else {
            throw DecodingError.dataCorrupted(
                DecodingError.Context(codingPath: decoder.codingPath, debugDescription: "not an absolute http(s) URL"))
        }
        self.url = url
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(url.absoluteString)
    }

    package var description: String { url.absoluteString }
}
