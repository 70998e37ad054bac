import Synchronization

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension GraphClient {
    /// A Graph client that takes its tokens from the shared sign-in and sends them as
    /// ``SharedSession/send(_:account:scopes:resources:)`` does (a DPoP-bound sign-in's with a
    /// proof): a 401 replaces the rejected token through
    /// ``SharedSession/validAccessToken(account:minimumLifetime:scopes:resources:replacing:)``.
    public init(session: SharedSession, account: String? = nil, baseURL: URL, transport: any HTTPTransport = CurlHTTPTransport()) {
        self.init(session: session, account: account, baseURL: baseURL, transport: transport, tokenFailed: { _ in })
    }

    /// The same; `tokenFailed` sees the session's own error when no token could be had (which
    /// ``GraphError/token(_:)`` carries as text only).
    package init(
        session: SharedSession, account: String?, baseURL: URL, transport: any HTTPTransport,
        tokenFailed: @escaping @Sendable (AuthKitError) -> Void
    ) {
        let last = Mutex<AccessToken?>(nil)
        self.init(baseURL: baseURL) { request, forceRefresh throws(GraphError) in
            let rejected = forceRefresh ? last.withLock { $0 } : nil
            let token: AccessToken
            do throws(AuthKitError) { token = try await session.validAccessToken(account: account, replacing: rejected) } catch {
                tokenFailed(error)
                throw .token("\(error)")
            }
            last.withLock { $0 = token }
            do throws(AuthKitError) {
                return try await ResourceRequest(transport: transport).send(
                    request, token: token, prover: ResourceRequest.prover(session, account: token.account))
            } catch {
                if case .http(let failure) = error { throw .transport(failure) }
                tokenFailed(error)
                throw .token("\(error)")
            }
        }
    }
}
