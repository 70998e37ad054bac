import Synchronization

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension GraphClient {
    /// A Graph client that takes its tokens from the shared sign-in: a 401 replaces the
    /// rejected token through ``SharedSession/validAccessToken(account:minimumLifetime:scopes:resources:replacing:)``.
    public init(session: SharedSession, account: String? = nil, baseURL: URL, transport: any HTTPTransport = CurlHTTPTransport()) {
        let last = Mutex<AccessToken?>(nil)
        self.init(baseURL: baseURL, transport: transport) { forceRefresh in
            let rejected = forceRefresh ? last.withLock { $0 } : nil
            let token = try await session.validAccessToken(account: account, replacing: rejected)
            last.withLock { $0 = token }
            return token.value
        }
    }
}
