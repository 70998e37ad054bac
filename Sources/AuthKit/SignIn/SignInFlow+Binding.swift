#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What binds a sign-in to this machine: its DPoP key (RFC 9449), and the authorization
/// request pushed to the provider (RFC 9126) rather than carried through the browser.
extension SignInFlow {
    /// Whether the provider answers for the profile's issuer (its discovery document, read
    /// and checked as the sign-in reads it): for a caller that would otherwise create
    /// something (a store, a passphrase) before a typo in the issuer shows.
    public func checkProvider() async throws(AuthKitError) {
        guard let issuer = profile.issuer else {
            throw .configuration(
                ConfigurationError(location: "login", key: "issuer", problem: "no issuer: pass --issuer or choose a profile"))
        }
        do {
            let url = try DiscoveryClient.discoveryURL(issuer: issuer, tenant: profile.tenant ?? "common")
            _ = try await DiscoveryClient(transport: transport).metadata(issuer: issuer, discoveryURL: url)
        } catch {
            throw .discovery(error)
        }
    }

    /// The new sign-in's DPoP key, as the profile's `dpop` and the provider's discovery decide
    /// (nil: bearer tokens), and a warning when the TPM was there but could not be used.
    func dpopKey(for metadata: ProviderMetadata) throws(AuthKitError) -> (DPoPKey?, warning: String?) {
        let algorithms = metadata.dpopSigningAlgValuesSupported
        switch profile.dpop {
        case .never:
            return (nil, nil)
        case .auto:
            guard algorithms?.contains("ES256") == true else { return (nil, nil) }
        case .always:
            if let algorithms, !algorithms.contains("ES256") {
                let listed = algorithms.compactMap { ProviderText.clean($0, limit: 20) }.prefix(8).joined(separator: ", ")
                throw .dpop(
                    .notOffered("the provider takes DPoP proofs signed with \(listed.isEmpty ? "no algorithm" : listed) only, not ES256"))
            }
        }
        let choice: TPMChoice
        do { choice = try TPMChoice(environment: session.environment) } catch { throw .configuration(error) }
        do { return try DPoPKey.make(choice) } catch { throw .dpop(error) }
    }

    /// The URL the browser opens: the request itself, or — where the provider takes pushed
    /// requests (always when it requires them) — only `client_id` and the `request_uri` it
    /// gave for the request pushed with client authentication (RFC 9126 §4).
    func authorizationURL(for request: AuthorizationRequest, metadata: ProviderMetadata, tokens: TokenEndpointClient)
        async throws(AuthKitError) -> URL
    {
        guard let endpoint = metadata.pushedAuthorizationRequestEndpoint else { return request.url }
        do {
            let pushed = try await tokens.push(request.parameters, to: endpoint)
            session.logger.debug("authorization request pushed", metadata: ["expires_in_s": "\(pushed.expiresIn)"])
            return request.pushedURL(requestURI: pushed.requestURI)
        } catch {
            if let rejection = Self.clientRejection(error, clientID: request.clientID, exchange: true) { throw rejection }
            if case .oauth(let code, let description, _) = error {
                throw .authorization(.providerError(code: code, description: description, uri: nil))
            }
            throw .authorization(.pushFailed(error.description))
        }
    }

    /// Opens the browser (in browser mode) and says what the terminal shows for `url`: in
    /// browser mode a one-time loopback link, never the authorization URL itself — a command
    /// line is readable by every local user, and the URL's state would let one of them answer
    /// this sign-in first (``LoopbackRedirectReceiver/startLink(to:for:)``). `--paste` and
    /// `--no-browser` show the URL itself, on the terminal only, and open nothing.
    func present(_ url: URL, receiver: LoopbackRedirectReceiver, options: Options) async throws(AuthKitError)
        -> (shown: URL, browser: BrowserLauncher.Outcome?)
    {
        guard options.mode == .browser else { return (url, nil) }
        let link: URL
        do throws(AuthorizationError) {
            link = URL(string: try receiver.startLink(to: url.absoluteString, for: options.timeout)) ?? url
        } catch {
            await receiver.close()
            throw .authorization(error)
        }
        return (link, browser.open(link.absoluteString))
    }
}
