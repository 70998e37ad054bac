#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Fetches and checks `{issuer}/.well-known/openid-configuration`.
package struct DiscoveryClient: Sendable {
    package var transport: any HTTPTransport
    package var timeout: Duration
    package var maxDocumentBytes: Int

    package init(transport: any HTTPTransport = CurlHTTPTransport(), timeout: Duration = .seconds(15), maxDocumentBytes: Int = 256 * 1024) {
        self.transport = transport
        self.timeout = timeout
        self.maxDocumentBytes = maxDocumentBytes
    }

    /// The discovery URL for an issuer: the issuer without a trailing slash, plus
    /// `/.well-known/openid-configuration`. For a `{tenantid}` template the tenant to ask is
    /// `tenant` (Microsoft: `common`, `organizations` or `consumers`, all publishing the template).
    package static func discoveryURL(issuer: String, tenant: String = "common") throws(DiscoveryError) -> URL {
        var base = issuer.replacing(IssuerMatcher.placeholder, with: tenant)
        while base.hasSuffix("/") { base.removeLast() }
        let url: URL
        do {
            url = try EndpointPolicy.check(base, name: "the issuer")
        } catch {
            throw .insecureEndpoint(error)
        }
        guard url.query == nil else { throw .invalidIssuer("an issuer has no query (…?…)") }
        return url.appendingPathComponent(".well-known").appendingPathComponent("openid-configuration")
    }

    /// Fetches the provider's metadata for `issuer` (exact, or a `{tenantid}` template).
    package func metadata(issuer: String, discoveryURL: URL? = nil) async throws(DiscoveryError) -> ProviderMetadata {
        let url: URL
        if let discoveryURL { url = discoveryURL } else { url = try Self.discoveryURL(issuer: issuer) }
        do {
            _ = try EndpointPolicy.check(url.absoluteString, name: "the discovery URL")
        } catch {
            throw .insecureEndpoint(error)
        }
        var headers = HTTPHeaders()
        headers.add("Accept", "application/json")
        let response: HTTPResponse
        do {
            response = try await transport.send(
                HTTPRequest(url: url, headers: headers, timeout: timeout, maxResponseBytes: maxDocumentBytes))
        } catch {
            throw .transport(error)
        }
        guard response.status == 200 else { throw .httpStatus(response.status, url: url.absoluteString) }
        return try ProviderMetadata(document: response.body, expectedIssuer: issuer)
    }
}
