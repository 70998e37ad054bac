import JOSE
import Logging

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Why a provider's key set could not be obtained.
public enum JWKSError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The key set could not be fetched (network, TLS, timeout).
    case transport(HTTPError)
    /// The provider answered with an HTTP error status.
    case httpStatus(Int, url: String)
    /// The document is not a usable JWK set.
    case invalid(JOSEError)

    public var description: String {
        switch self {
        case .transport(let error): return "cannot fetch the provider's signing keys: \(error)"
        case .httpStatus(let status, let url): return "the provider's key set at \(url) answered HTTP \(status)"
        case .invalid(let error): return "the provider's key set is unusable: \(error)"
        }
    }
}

/// The provider's JSON Web Key Sets, fetched when first needed and kept per process.
///
/// * An unknown `kid` refetches the set once — the first miss after a key rotation gets
///   through — and then not again for ``Policy/refetchCooldown``, so a flood of tokens with
///   made-up `kid`s cannot make authkit hammer the provider.
/// * A signature that fails under a known `kid` never causes a refetch.
/// * Concurrent callers share one in-flight fetch; a caller whose `kid` was unknown while a
///   refetch was under way (or had just finished) uses that refetch's set.
/// * A set older than ``Policy/maxAge`` is fetched again before use (a long-running tool
///   stops trusting keys the provider withdrew). When that fetch fails, the last good set
///   keeps serving until it is ``Policy/maxStaleAge`` old, and the fetch is not retried
///   within the cooldown.
package actor JWKSCache {
    package struct Policy: Sendable {
        package var refetchCooldown: Duration = .seconds(30)
        /// How long a fetched set is used before it is fetched again.
        package var maxAge: Duration = .seconds(3600)
        /// How long the last good set keeps serving while fetching a new one fails.
        package var maxStaleAge: Duration = .seconds(24 * 3600)
        package var timeout: Duration = .seconds(15)
        package var maxBytes: Int = JWKSet.maximumSize
        package init() {}
    }

    private struct Entry {
        var keys: JWKSet
        var fetchedAt: Date
        /// Counts the successful fetches, so a caller can tell the set changed under it.
        var version: Int
    }

    private let transport: any HTTPTransport
    private let policy: Policy
    private let clock: @Sendable () -> Date
    private let logger: Logger
    private var entries: [URL: Entry] = [:]
    private var lastMissRefetch: [URL: Date] = [:]
    private var lastFailure: [URL: (at: Date, error: JWKSError)] = [:]
    private var inFlight: [URL: Task<Result<JWKSet, JWKSError>, Never>] = [:]
    /// How many HTTP fetches this cache has made (tests and diagnostics).
    package private(set) var fetchCount = 0

    package init(
        transport: any HTTPTransport = CurlHTTPTransport(), policy: Policy = Policy(),
        clock: @escaping @Sendable () -> Date = { Date() }, logger: Logger = Logger(label: "authkit")
    ) {
        self.transport = transport
        self.policy = policy
        self.clock = clock
        self.logger = logger
    }

    /// Validates `token` with `validator`, fetching the keys from `jwksURI` when needed and
    /// refetching once on an unknown `kid` — subject to the cooldown, unless
    /// `refetchWithinCooldown`: a refresh whose provider has just used up the old refresh token
    /// asks once more even inside it, so a key rollover heals on the next try.
    package func validate(
        _ token: String, validator: IDTokenValidator, jwksURI: URL, nonce: String?, refetchWithinCooldown: Bool = false
    ) async throws(AuthKitError) -> ValidatedIDToken {
        let jws: CompactJWS
        do { jws = try CompactJWS(parsing: token) } catch { throw .idToken(error) }
        let keys: JWKSet
        do { keys = try await self.keys(for: jwksURI) } catch { throw .keys(error) }
        let version = entries[jwksURI]?.version ?? 0
        do {
            return try validator.validate(jws, keys: keys, nonce: nonce)
        } catch  where error.isUnknownKeyID {
            let miss = error
            let fresh: JWKSet
            if let running = inFlight[jwksURI] {
                // Another caller is refetching: its set is the one to try.
                guard case .success(let keys) = await running.value else { throw .idToken(miss) }
                fresh = keys
            } else if let entry = entries[jwksURI], entry.version != version {
                // A refetch finished while this caller was suspended.
                fresh = entry.keys
            } else {
                guard refetchWithinCooldown || mayRefetchAfterMiss(jwksURI) else {
                    logger.debug(
                        "unknown kid within the refetch cooldown; key set not fetched again",
                        metadata: ["jwks_uri": "\(jwksURI.absoluteString)"])
                    throw .idToken(miss)
                }
                logger.debug("unknown kid; fetching the key set again", metadata: ["jwks_uri": "\(jwksURI.absoluteString)"])
                lastMissRefetch[jwksURI] = clock()
                do { fresh = try await fetch(jwksURI) } catch { throw .idToken(miss) }
            }
            do { return try validator.validate(jws, keys: fresh, nonce: nonce) } catch { throw .idToken(error) }
        } catch {
            throw .idToken(error)
        }
    }

    /// The key set for `url`: cached while younger than ``Policy/maxAge``, else fetched now.
    package func keys(for url: URL) async throws(JWKSError) -> JWKSet {
        guard let entry = entries[url] else { return try await fetch(url) }
        let now = clock()
        let age = now.timeIntervalSince(entry.fetchedAt)
        if age < Self.seconds(policy.maxAge) { return entry.keys }
        if let failure = lastFailure[url], now.timeIntervalSince(failure.at) < Self.seconds(policy.refetchCooldown) {
            // The provider failed moments ago: do not ask again yet.
            guard age < Self.seconds(policy.maxStaleAge) else { throw failure.error }
            return entry.keys
        }
        return try await fetch(url)
    }

    private func mayRefetchAfterMiss(_ url: URL) -> Bool {
        guard let last = lastMissRefetch[url] else { return true }
        return clock().timeIntervalSince(last) >= Self.seconds(policy.refetchCooldown)
    }

    private static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) * 1e-18
    }

    /// Fetches (sharing a fetch already under way). On failure a cached set younger than
    /// ``Policy/maxStaleAge`` is returned instead.
    private func fetch(_ url: URL) async throws(JWKSError) -> JWKSet {
        let task: Task<Result<JWKSet, JWKSError>, Never>
        if let running = inFlight[url] {
            task = running
        } else {
            fetchCount += 1
            logger.debug("fetching the provider's key set", metadata: ["jwks_uri": "\(url.absoluteString)"])
            let transport = self.transport, policy = self.policy
            task = Task { await Self.download(url, transport: transport, policy: policy) }
            inFlight[url] = task
        }
        let result = await task.value
        if inFlight[url] == task {
            inFlight[url] = nil
            // Only the first caller to return records the outcome, once per fetch.
            switch result {
            case .success(let keys):
                entries[url] = Entry(keys: keys, fetchedAt: clock(), version: (entries[url]?.version ?? 0) + 1)
                lastFailure[url] = nil
            case .failure(let error):
                lastFailure[url] = (clock(), error)
            }
        }
        switch result {
        case .success(let keys):
            return keys
        case .failure(let error):
            if let entry = entries[url], clock().timeIntervalSince(entry.fetchedAt) < Self.seconds(policy.maxStaleAge) {
                return entry.keys
            }
            throw error
        }
    }

    private static func download(_ url: URL, transport: any HTTPTransport, policy: Policy) async -> Result<JWKSet, JWKSError> {
        var headers = HTTPHeaders()
        headers.add("Accept", "application/json, application/jwk-set+json")
        let response: HTTPResponse
        do {
            response = try await transport.send(
                HTTPRequest(url: url, headers: headers, timeout: policy.timeout, maxResponseBytes: policy.maxBytes))
        } catch {
            return .failure(.transport(error))
        }
        guard response.status == 200 else { return .failure(.httpStatus(response.status, url: url.absoluteString)) }
        do {
            return .success(try JWKSet(jsonData: response.body))
        } catch {
            return .failure(.invalid(error))
        }
    }
}
