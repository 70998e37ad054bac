import Synchronization

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The newest `DPoP-Nonce` each server sent (RFC 9449 §8, §9), by origin, for this process:
/// the next proof to that server carries it. A nonce is a server's, not a secret; one that is
/// not the RFC's `1*NQCHAR` (or is longer than 512 bytes) is ignored.
package final class DPoPNonces: Sendable {
    /// Every session and sign-in of the process shares one list (servers rotate nonces per
    /// client or per server, never per caller).
    package static let shared = DPoPNonces()

    private let nonces = Mutex<[String: String]>([:])

    package init() {}

    /// The nonce to send to `url`'s origin, if that server sent one.
    package func nonce(for url: URL) -> String? {
        let origin = Self.origin(of: url)
        return nonces.withLock { $0[origin] }
    }

    /// The origin as a proof's `htu` normalizes it (scheme and host lowercased, no default port).
    static func origin(of url: URL) -> String {
        guard let target = DPoPProof.target(of: url) else { return url.redactedOrigin }
        let afterScheme =
            target.index(target.startIndex, offsetBy: (url.scheme?.count ?? 0) + 3, limitedBy: target.endIndex) ?? target.endIndex
        return String(target[..<(target[afterScheme...].firstIndex(of: "/") ?? target.endIndex)])
    }

    /// Remembers the `DPoP-Nonce` of `response` (from `url`); returns whether there was a new one.
    @discardableResult
    package func remember(_ response: HTTPResponse, from url: URL) -> Bool {
        guard let nonce = response.headers["DPoP-Nonce"].map({ $0.trimmingASCIIWhitespace() }), Self.isNonce(nonce) else {
            return false
        }
        return nonces.withLock { nonces in
            let origin = Self.origin(of: url)
            guard nonces[origin] != nonce else { return false }
            nonces[origin] = nonce
            return true
        }
    }

    /// RFC 9449 §8.1: `nonce = 1*NQCHAR` (`%x21 / %x23-5B / %x5D-7E`).
    static func isNonce(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.count <= 512
            && text.utf8.allSatisfy { $0 == 0x21 || (0x23...0x5B).contains($0) || (0x5D...0x7E).contains($0) }
    }
}
