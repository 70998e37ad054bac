#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One request to a resource server with an access token: `Authorization: Bearer …`, or for a
/// bound token `Authorization: DPoP …` with a proof naming the method, the URL and the token's
/// hash (RFC 9449 §7), sent again once with the server's new nonce when it answers
/// `WWW-Authenticate: DPoP error="use_dpop_nonce"` (§9).
package struct ResourceRequest: Sendable {
    /// Signs a proof: with the sign-in's key here, or by the agent that holds it.
    package typealias Prover = @Sendable (DPoPProof) async throws(AuthKitError) -> String

    package var transport: any HTTPTransport
    package var nonces: DPoPNonces = .shared

    package init(transport: any HTTPTransport) {
        self.transport = transport
    }

    /// Methods a token is never sent with: TRACE (and TRACK) answer with the request they got,
    /// the token with it; CONNECT tunnels.
    package static let refusedMethods: Set<String> = ["TRACE", "TRACK", "CONNECT"]

    /// Sends `request` with `token` (a proof from `prover` when the token is bound).
    package func send(_ request: HTTPRequest, token: AccessToken, prover: Prover?) async throws(AuthKitError) -> HTTPResponse {
        guard !Self.refusedMethods.contains(request.method.rawValue.uppercased()) else {
            throw .unsupported("a token is never sent with \(request.method.rawValue.uppercased()): the server would echo or tunnel it")
        }
        guard token.tokenType == "DPoP" else {
            var request = request
            request.headers.replace("Authorization", with: "Bearer \(token.value)")
            return try await exchange(request)
        }
        guard let prover else { throw .dpop(.invalidRequest("the token is bound to a key and no proof can be made")) }
        let hash: String
        do { hash = try DPoPProof.hash(of: token.value) } catch { throw .dpop(error) }
        func attempt() async throws(AuthKitError) -> HTTPResponse {
            let proof: DPoPProof
            do {
                proof = try DPoPProof(
                    method: request.method.rawValue, url: request.url, accessTokenHash: hash, nonce: nonces.nonce(for: request.url))
            } catch {
                throw .dpop(error)
            }
            var signed = request
            signed.headers.replace("Authorization", with: "DPoP \(token.value)")
            signed.headers.replace("DPoP", with: try await prover(proof))
            let response = try await exchange(signed)
            nonces.remember(response, from: request.url)
            return response
        }
        let response = try await attempt()
        guard response.status == 401, Self.asksForNonce(response), nonces.nonce(for: request.url) != nil else { return response }
        return try await attempt()
    }

    /// The prover of `account`'s sign-in in `session`: the agent when it serves the group
    /// (it holds the key), else the key read from the store.
    package static func prover(_ session: SharedSession, account: String) -> Prover {
        { proof throws(AuthKitError) in
            if let agent = session.agent, let signed = try await agent.proof(proof, session: session, account: account) {
                return signed
            }
            return try await localProof(proof, session: session, account: account)
        }
    }

    /// `proof` signed with the key of `account`'s sign-in (nil: the group's current one), read
    /// from `session`'s store.
    package static func localProof(_ proof: DPoPProof, session: SharedSession, account: String?) async throws(AuthKitError) -> String {
        let (item, record) = try await session.select(account: account)
        // A proof for the provider's own token or revocation endpoint would let whoever holds a
        // copied refresh token use it: no client needs one (a refresh happens where the
        // refresh token is).
        // Compared in normal form only: `/%74oken` or `/x/../token` is the token endpoint to
        // the server.
        guard DPoPProof.isPlainTarget(proof.target) else {
            throw .dpop(.invalidRequest("no proof is made for a URL with dot segments or escaped letters or digits; write it plainly"))
        }
        // Nor written with a trailing slash, a `;` parameter, a trailing dot or another case,
        // which a server may route there too.
        let forbidden = [record.tokenEndpoint.url, record.revocationEndpoint?.url].compactMap { $0 }.compactMap(DPoPProof.target(of:))
        guard !forbidden.map(DPoPProof.routeKey(of:)).contains(DPoPProof.routeKey(of: proof.target)) else {
            throw .dpop(.invalidRequest("no proof is made for the provider's token or revocation endpoint"))
        }
        guard let key = try await session.dpopKeys.key(for: record, at: item.key) else {
            throw .dpop(.invalidRequest("the sign-in of \(record.account) is not bound to a key (its tokens are bearer tokens)"))
        }
        do { return try proof.signed(with: key.key, issuedAt: session.clock()) } catch { throw .dpop(error) }
    }

    private func exchange(_ request: HTTPRequest) async throws(AuthKitError) -> HTTPResponse {
        do { return try await transport.send(request) } catch { throw .http(error) }
    }

    /// Whether a `WWW-Authenticate` challenge of the DPoP scheme says `error="use_dpop_nonce"`.
    static func asksForNonce(_ response: HTTPResponse) -> Bool {
        response.headers.values("WWW-Authenticate").contains { challenge in
            let text = challenge.lowercased()
            return text.hasPrefix("dpop ") || text.contains(", dpop ")
                ? text.contains(#"error="use_dpop_nonce""#) || text.contains("error=use_dpop_nonce") : false
        }
    }
}

extension SharedSession {
    /// Sends `request` to a resource server with the sign-in's access token: as
    /// `Authorization: Bearer …`, or — for a DPoP sign-in — as `Authorization: DPoP …` with a
    /// proof signed by the sign-in's key (here, or by the agent that holds it), once more with
    /// the server's nonce when it asks for one. Any status comes back as it is.
    ///
    /// - Parameters:
    ///   - request: The request, without `Authorization`.
    ///   - account: Which account (by default the group's current one).
    ///   - scopes: Other or fewer scopes than the sign-in's.
    ///   - resources: The APIs the token is for (RFC 8707).
    public func send(
        _ request: HTTPRequest, account: String? = nil, scopes: [String]? = nil, resources: [String] = []
    ) async throws(AuthKitError) -> HTTPResponse {
        let token = try await validAccessToken(account: account, scopes: scopes, resources: resources)
        return try await ResourceRequest(transport: transport).send(
            request, token: token, prover: ResourceRequest.prover(self, account: token.account))
    }
}
