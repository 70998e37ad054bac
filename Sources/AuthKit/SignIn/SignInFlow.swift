import JOSE
import SecretStore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A sign-in: discovery, then the authorization code flow with PKCE, `state` and `nonce`
/// through the browser (or a pasted URL), or the device authorization grant; the code
/// exchange; the id_token checked against the provider's keys; the tokens stored in the
/// group. Nothing is stored unless the id_token validated.
///
/// The flow reports what a person should see through ``Event``s; it prints nothing.
public struct SignInFlow: Sendable {
    /// How the person completes the sign-in.
    public enum Mode: Sendable, Equatable {
        /// Open the system browser (`$BROWSER`, else `xdg-open`) and wait for the redirect.
        case browser
        /// Only show the URL; wait for the redirect.
        case noBrowser
        /// Show the URL and also accept the final address pasted back (a browser on another
        /// machine); the loopback redirect still works if the browser is local after all.
        case paste
        /// The device authorization grant (RFC 8628): a code to enter on another device.
        case deviceCode
    }

    /// How a sign-in runs.
    public struct Options: Sendable {
        /// Browser, URL only, paste-back or device code.
        public var mode: Mode = .browser
        /// How long to wait for the browser, a pasted URL or the device approval.
        public var timeout: Duration = .seconds(180)
        /// Clock skew allowed when checking the id_token's times.
        public var leeway: Duration = IDTokenValidator.defaultLeeway
        /// Options with this mode and a wait of at most `timeout` for the person.
        public init(mode: Mode = .browser, timeout: Duration = .seconds(180)) {
            self.mode = mode
            self.timeout = timeout
        }
    }

    /// What the sign-in reports while it runs, for a user interface to show.
    public enum Event: Sendable {
        /// The provider's discovery document was read.
        case discovered(issuer: String)
        /// The URL to open; `browser` says whether a browser was started (nil: not attempted).
        case openURL(URL, browser: BrowserLauncher.Outcome?)
        /// Waiting for the redirect (and, in paste mode, for a pasted URL) until `deadline`.
        case waiting(deadline: Date, acceptsPaste: Bool)
        /// A request or pasted URL was refused; the wait goes on.
        case refused(AuthorizationError)
        /// Device flow: what the person must do.
        case deviceCode(DeviceAuthorization)
        /// Device flow: still waiting.
        case devicePending(slowDown: Bool)
        /// The code is being exchanged and the id_token checked.
        case exchanging
    }

    package let profile: Profile
    package let session: SharedSession
    package var transport: any HTTPTransport
    package var browser: BrowserLauncher
    package var clock: @Sendable () -> Date

    /// A sign-in for `profile`, stored in `session`'s group.
    /// - Parameters:
    ///   - profile: The provider, client and scopes.
    ///   - session: Where the sign-in is stored.
    ///   - transport: How HTTP requests are sent.
    ///   - browser: How the authorization URL is opened.
    ///   - clock: The time used to check the id_token.
    public init(
        profile: Profile, session: SharedSession, transport: any HTTPTransport = CurlHTTPTransport(),
        browser: BrowserLauncher = BrowserLauncher(environment: ProcessInfo.processInfo.environment),
        clock: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.profile = profile
        self.session = session
        self.transport = transport
        self.browser = browser
        self.clock = clock
    }

    /// Runs the sign-in. `pasted` delivers what the person pastes (paste mode only).
    public func run(
        _ options: Options = Options(),
        pasted: AsyncStream<String>? = nil,
        onEvent: @escaping @Sendable (Event) -> Void = { _ in }
    ) async throws(AuthKitError) -> SignInResult {
        guard let issuer = profile.issuer else {
            throw .configuration(
                ConfigurationError(
                    location: "login", key: "issuer",
                    problem: "no issuer: pass --issuer, set AUTHKIT_ISSUER or choose a profile "
                        + "(--profile microsoft: Microsoft Entra ID and personal accounts)"))
        }
        guard let clientID = profile.clientID else {
            throw .configuration(
                ConfigurationError(
                    location: "login", key: "client_id",
                    problem: "no client id: pass --client-id, set AUTHKIT_CLIENT_ID or choose a profile"))
        }
        let discovery = DiscoveryClient(transport: transport)
        let metadata: ProviderMetadata
        do {
            let url = try DiscoveryClient.discoveryURL(issuer: issuer, tenant: profile.tenant ?? "common")
            metadata = try await discovery.metadata(issuer: issuer, discoveryURL: url)
        } catch {
            throw .discovery(error)
        }
        onEvent(.discovered(issuer: metadata.issuer))
        session.logger.debug(
            "provider discovered",
            metadata: [
                "issuer": "\(metadata.issuer)", "token_endpoint": "\(metadata.tokenEndpoint.absoluteString)",
                "iss_parameter": "\(metadata.authorizationResponseIssParameterSupported)",
                "device_grant": "\(metadata.deviceAuthorizationEndpoint != nil)", "revocation": "\(metadata.revocationEndpoint != nil)",
            ])

        let client = OAuthClient(clientID: clientID, clientSecret: profile.clientSecret)
        var tokens = TokenEndpointClient(
            endpoint: metadata.tokenEndpoint, client: client, authMethodsSupported: metadata.tokenEndpointAuthMethodsSupported,
            transport: transport, clock: clock)
        let (dpopKey, keyWarning) = try dpopKey(for: metadata)
        tokens.dpop = dpopKey

        let response: TokenResponse
        let nonce: String?
        if options.mode == .deviceCode {
            response = try await deviceSignIn(metadata: metadata, tokens: tokens, options: options, onEvent: onEvent)
            nonce = nil
        } else {
            (response, nonce) = try await browserSignIn(
                metadata: metadata, clientID: clientID, tokens: tokens, options: options, pasted: pasted, onEvent: onEvent)
        }

        // The id_token decides who signed in; nothing is stored without it.
        guard let idToken = response.idToken else { throw .missingIDToken }
        let algorithms = metadata.idTokenSigningAlgValuesSupported ?? []
        let validator = IDTokenValidator(
            issuer: IssuerRule(configured: metadata.issuer), clientID: clientID,
            allowedAlgorithms: JWSAlgorithm.allowlist(advertised: algorithms), leeway: options.leeway, clock: clock)
        let validated = try await session.keys.validate(idToken, validator: validator, jwksURI: metadata.jwksURI, nonce: nonce)
        let claims = validated.claims
        guard let iss = claims.issuer, let subject = claims.subject else { throw .missingIDToken }

        let now = clock()
        let username =
            claims["preferred_username"]?.stringValue ?? claims["email"]?.stringValue
            ?? claims["upn"]?.stringValue ?? subject
        let account = ProviderText.clean(username, limit: 256) ?? subject
        let granted = response.scopes ?? profile.scopes
        let allowed = JWSAlgorithm.allowlist(advertised: algorithms).map(\.rawValue).sorted()
        var record = TokenRecord(
            version: TokenRecord.currentVersion, generation: 1,
            issuer: iss, configuredIssuer: issuer, subject: subject, account: account,
            name: ProviderText.clean(claims["name"]?.stringValue, limit: 256), tenantID: claims.tenantID,
            clientID: clientID, clientSecret: profile.clientSecret?.value,
            tokenEndpoint: StoredURL(metadata.tokenEndpoint), jwksURI: StoredURL(metadata.jwksURI),
            revocationEndpoint: metadata.revocationEndpoint.map(StoredURL.init),
            tokenEndpointAuthMethods: metadata.tokenEndpointAuthMethodsSupported,
            idTokenAlgorithms: allowed, graphBaseURL: profile.graphBaseURL.flatMap { URL(string: $0) }.map(StoredURL.init),
            tokenType: dpopKey == nil ? nil : "DPoP", dpopThumbprint: dpopKey?.thumbprint, dpopKeyPlace: dpopKey?.place,
            tokenExchange: metadata.grantTypesSupported?.contains(TokenEndpointClient.tokenExchangeGrant) == true ? true : nil,
            scopes: granted,
            accessToken: response.accessToken,
            accessTokenExpiresAt: response.expiresAt?.timeIntervalSince1970, refreshToken: response.refreshToken,
            idToken: idToken, idTokenVerifiedAt: now.timeIntervalSince1970, additionalTokens: nil,
            signedInAt: now.timeIntervalSince1970, refreshedAt: nil)
        // A new sign-in of the same account continues its generation count.
        if let previous = try? await session.records().compactMap({ try? $0.record.get() })
            .first(where: { $0.issuer == record.issuer && $0.clientID == clientID && $0.account == record.account })
        {
            record.generation = RefreshStateMachine.nextGeneration(previous.generation)
        }
        var (location, warnings) = try await session.save(record, dpopKey: dpopKey)
        if let keyWarning { warnings.insert(keyWarning, at: 0) }
        session.logger.debug(
            "signed in and stored",
            metadata: [
                "account": "\(record.account)", "algorithm": "\(validated.algorithm.rawValue)",
                "kid": "\(validated.key.keyID ?? "-")", "location": "\(location)",
                "dpop": "\(dpopKey?.place ?? "no")",
            ])
        return SignInResult(
            account: Account(record: record, location: location), location: location, grantedScopes: record.scopes, warnings: warnings)
    }

    /// Asks the token endpoint about the client before the browser opens: a
    /// provider that does not know the client id shows its error in the browser and never
    /// redirects, so the wait would only time out. One stateless request — an
    /// `authorization_code` grant with a made-up code and verifier — answered `invalid_client`
    /// (RFC 6749 §5.2) or with Entra's AADSTS700016 ("application not found in the directory",
    /// Microsoft identity platform error codes) ends the sign-in. Anything else goes on:
    /// glewlwyd, for one, answers `unauthorized_client` to a known client with a bad code.
    private func preflight(tokens: TokenEndpointClient, clientID: String, redirectURI: String) async throws(AuthKitError) {
        var probe = tokens
        probe.timeout = .seconds(10)
        guard let code = try? SecureRandom.token(), let verifier = try? SecureRandom.token(byteCount: 48) else { return }
        do {
            _ = try await probe.request([
                ("grant_type", "authorization_code"), ("code", code), ("redirect_uri", redirectURI), ("code_verifier", verifier),
            ])
        } catch {
            if let rejection = Self.clientRejection(error, clientID: clientID) { throw rejection }
            session.logger.debug("client pre-flight answered; the sign-in goes on", metadata: ["answer": "\(Self.errorCode(error))"])
        }
    }

    /// `invalid_client`, or Entra's "application not found", as a ``AuthKitError/clientRejected(clientID:code:description:)``.
    /// `exchange`: the answer to a real code exchange or device poll, where
    /// `unauthorized_client` (RFC 6749 §5.2: this client may not use this grant) is a
    /// configuration problem too — unlike in the pre-flight, where glewlwyd answers it to any
    /// bad code.
    static func clientRejection(_ error: TokenEndpointError, clientID: String, exchange: Bool = false) -> AuthKitError? {
        guard case .oauth(let code, let description, _) = error else { return nil }
        guard
            code == "invalid_client" || description?.contains("AADSTS700016") == true
                || (exchange && code == "unauthorized_client")
        else { return nil }
        return .clientRejected(clientID: clientID, code: code, description: description)
    }

    static func errorCode(_ error: TokenEndpointError) -> String {
        if case .oauth(let code, _, _) = error { return code }
        return "no OAuth error"
    }

    private func browserSignIn(
        metadata: ProviderMetadata, clientID: String, tokens: TokenEndpointClient, options: Options,
        pasted: AsyncStream<String>?, onEvent: @escaping @Sendable (Event) -> Void
    ) async throws(AuthKitError) -> (TokenResponse, String) {
        let receiver: LoopbackRedirectReceiver
        do {
            receiver = try await LoopbackRedirectReceiver.start(
                path: profile.redirectPath, redirectHost: profile.redirectHost, port: profile.redirectPort)
        } catch {
            throw .authorization(error)
        }
        let request: AuthorizationRequest
        do {
            request = try AuthorizationRequest(
                authorizationEndpoint: metadata.authorizationEndpoint, clientID: clientID, redirectURI: receiver.redirectURI,
                scopes: profile.scopes, loginHint: profile.loginHint, prompt: profile.prompt, domainHint: profile.domainHint,
                dpopThumbprint: tokens.dpop?.thumbprint, resources: profile.resources)
        } catch {
            await receiver.close()
            throw .authorization(error)
        }
        do throws(AuthKitError) {
            try await preflight(tokens: tokens, clientID: clientID, redirectURI: receiver.redirectURI)
        } catch {
            await receiver.close()
            throw error
        }
        let url: URL
        do throws(AuthKitError) {
            url = try await authorizationURL(for: request, metadata: metadata, tokens: tokens)
        } catch {
            await receiver.close()
            throw error
        }
        let (shown, outcome) = try await present(url, receiver: receiver, options: options)
        onEvent(.openURL(shown, browser: outcome))
        let expectation = CallbackExpectation(
            state: request.state, issuer: metadata.issuer,
            issuerRequired: metadata.authorizationResponseIssParameterSupported)
        let acceptsPaste = options.mode == .paste && pasted != nil
        onEvent(.waiting(deadline: clock().addingTimeInterval(Double(options.timeout.components.seconds)), acceptsPaste: acceptsPaste))

        let grant: AuthorizationGrant
        do {
            grant = try await Self.firstGrant(
                receiver: receiver, expectation: expectation, timeout: options.timeout,
                pasted: acceptsPaste ? pasted : nil, onEvent: onEvent)
        } catch {
            await receiver.close()
            if case .timedOut(let seconds) = error {
                throw .authorization(.noCallback(seconds: seconds, clientID: clientID, redirectURI: receiver.redirectURI))
            }
            throw .authorization(error)
        }
        onEvent(.exchanging)
        session.logger.debug("redeeming the authorization code", metadata: ["redirect_uri": "\(receiver.redirectURI)"])
        let exchanged: Result<TokenResponse, TokenEndpointError>
        do {
            exchanged = .success(try await tokens.exchange(grant, verifier: request.verifier, redirectURI: receiver.redirectURI))
        } catch {
            exchanged = .failure(error)
        }
        // The browser was sent from the callback URL (which carries the code) to a clean result
        // page: the receiver serves it meanwhile, and close() waits (at most 2 s after the
        // redirect, usually not at all by now) until the browser has it.
        await receiver.close()
        switch exchanged {
        case .success(let response): return (response, request.nonce)
        case .failure(let error): throw Self.clientRejection(error, clientID: clientID, exchange: true) ?? .tokenEndpoint(error)
        }
    }

    /// The first valid grant from the loopback redirect or, in paste mode, a pasted URL.
    static func firstGrant(
        receiver: LoopbackRedirectReceiver, expectation: CallbackExpectation, timeout: Duration,
        pasted: AsyncStream<String>?, onEvent: @escaping @Sendable (Event) -> Void
    ) async throws(AuthorizationError) -> AuthorizationGrant {
        let result: Result<AuthorizationGrant, AuthorizationError> = await withTaskGroup(
            of: Result<AuthorizationGrant, AuthorizationError>?.self
        ) { group in
            group.addTask {
                do throws(AuthorizationError) {
                    return .success(
                        try await receiver.waitForCallback(expectation, timeout: timeout) { event in
                            if case .refused(let error) = event { onEvent(.refused(error)) }
                        })
                } catch {
                    return .failure(error)
                }
            }
            if let pasted {
                group.addTask {
                    for await text in pasted {
                        do throws(AuthorizationError) {
                            switch expectation.evaluate(try AuthorizationCallback(pasted: text)) {
                            case .accepted(let grant): return .success(grant)
                            case .failed(let error): return .failure(error)
                            case .ignored(let error): onEvent(.refused(error))
                            }
                        } catch {
                            onEvent(.refused(error))
                        }
                    }
                    return nil  // input ended: keep waiting for the redirect
                }
            }
            var outcome: Result<AuthorizationGrant, AuthorizationError> = .failure(.cancelled)
            for await next in group {
                guard let next else { continue }
                outcome = next
                break
            }
            group.cancelAll()
            return outcome
        }
        return try result.get()
    }
}
