#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The device authorization grant (RFC 8628): a code to type on another device, then polling.
extension SignInFlow {
    func deviceSignIn(
        metadata: ProviderMetadata, tokens: TokenEndpointClient, options: Options, onEvent: @escaping @Sendable (Event) -> Void
    ) async throws(AuthKitError) -> TokenResponse {
        guard let endpoint = metadata.deviceAuthorizationEndpoint else { throw .device(.notSupported) }
        let device = DeviceAuthorizationClient(endpoint: endpoint, tokenClient: tokens)
        do throws(DeviceFlowError) {
            let authorization = try await device.start(scopes: profile.scopes)
            // The sign-in's timeout bounds the wait as it does for the browser: stop polling at
            // whichever comes first, it or the code's own expiry — and the person is shown that
            // time, not the code's lifetime.
            let deadline = clock().addingTimeInterval(Double(options.timeout.components.seconds))
            let bounded = DeviceAuthorization(
                deviceCode: authorization.deviceCode, userCode: authorization.userCode,
                verificationURI: authorization.verificationURI, verificationURIComplete: authorization.verificationURIComplete,
                expiresAt: min(authorization.expiresAt, deadline), interval: authorization.interval)
            onEvent(.deviceCode(bounded))
            do {
                return try await device.waitForTokens(bounded) { event in
                    if case .pending(_, let slowDown) = event { onEvent(.devicePending(slowDown: slowDown)) }
                }
            } catch {
                // Our own limit, not the provider's expired_token or the code's expiry.
                if case .expired = error, deadline < authorization.expiresAt, clock() >= deadline {
                    throw .timedOut(seconds: Int(options.timeout.components.seconds))
                }
                throw error
            }
        } catch {
            if case .request(let request) = error,
                let rejection = Self.clientRejection(request, clientID: profile.clientID ?? "", exchange: true)
            {
                throw rejection
            }
            throw .device(error)
        }
    }
}
