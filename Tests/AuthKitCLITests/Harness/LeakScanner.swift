import Foundation
import TestSupport

/// Looks for the provider's secrets in captured text. Findings name the kind of secret and
/// where it appeared, never the secret itself: test logs are output too.
enum LeakScanner {
    /// One secret the provider issued or received (`GET /_test/issued`).
    struct Secret: Sendable {
        var kind: String
        var value: String
    }

    struct Finding: Sendable, CustomStringConvertible {
        var kind: String
        var source: String
        var offset: Int
        var description: String { "a \(kind) appears in \(source) (at character \(offset))" }
    }

    /// Every issued value with its kind.
    static func secrets(issued: PeerJSON) -> [Secret] {
        issued["items"].array.compactMap { item in
            guard let value = item["value"].string, !value.isEmpty else { return nil }
            return Secret(kind: item["kind"].string ?? "secret", value: value)
        }
    }

    /// What to search for: the whole value, and the parts that would still be a leak if a
    /// message shortened it — a JWT's payload and signature (its header is shared by every
    /// token, so it proves nothing), an opaque value's first 12 characters.
    static func needles(for secret: String) -> [String] {
        let parts = secret.split(separator: ".", omittingEmptySubsequences: false)
        if parts.count == 3, parts.allSatisfy({ !$0.isEmpty }) {
            return [secret, String(parts[1]), String(parts[2])].filter { $0.count >= 16 }
        }
        return secret.count >= 24 ? [secret, String(secret.prefix(12))] : [secret]
    }

    /// Every place a secret (or a telling part of it) occurs in `sources`.
    static func scan(_ sources: [(name: String, text: String)], for secrets: [Secret]) -> [Finding] {
        var findings: [Finding] = []
        for secret in secrets {
            for needle in needles(for: secret.value) {
                for source in sources {
                    if let range = source.text.range(of: needle) {
                        findings.append(
                            Finding(
                                kind: secret.kind, source: source.name,
                                offset: source.text.distance(from: source.text.startIndex, to: range.lowerBound)))
                    }
                }
            }
        }
        return findings
    }
}
