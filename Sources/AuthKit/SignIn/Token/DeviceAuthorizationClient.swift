#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What the person must do to approve a device-code sign-in (RFC 8628 §3.2). The device
/// code itself is a credential and never shown.
public struct DeviceAuthorization: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    package let deviceCode: String
    /// The code the person enters on the verification page.
    public let userCode: String
    /// The page where the person enters the code.
    public let verificationURI: URL
    /// The verification URI with the user code filled in, when the provider offers one.
    public let verificationURIComplete: URL?
    /// When the codes expire.
    public let expiresAt: Date
    /// How often authkit asks the provider whether the code was approved.
    public let interval: Duration

    public var description: String {
        "DeviceAuthorization(user code \(userCode), \(verificationURI.absoluteString))"
    }
    public var debugDescription: String { description }
    public var customMirror: Mirror {
        Mirror(self, children: ["userCode": userCode, "verificationURI": verificationURI, "expiresAt": expiresAt, "interval": interval])
    }
}

/// Why a device-code sign-in failed.
public enum DeviceFlowError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The provider has no device authorization endpoint.
    case notSupported
    /// The provider refused a request, or it failed.
    case request(TokenEndpointError)
    /// The provider's answer is not what RFC 8628 describes.
    case malformedResponse(String)
    /// The code expired before it was approved.
    case expired
    /// The person declined.
    case denied
    /// Not approved within the sign-in's own time limit (shorter than the code's life).
    case timedOut(seconds: Int)
    /// The sign-in was cancelled.
    case cancelled

    public var description: String {
        switch self {
        case .notSupported:
            return "the provider offers no device authorization endpoint; sign in with the browser instead"
        case .request(let error):
            return error.description
        case .malformedResponse(let reason):
            return "the device authorization answer is malformed: \(reason)"
        case .expired:
            return "the device code expired before the sign-in was approved; run the login again"
        case .denied:
            return "the sign-in was declined on the verification page"
        case .timedOut(let seconds):
            return "the sign-in was not approved within \(seconds) s; run the login again"
        case .cancelled:
            return "the sign-in was cancelled"
        }
    }
}

/// The device authorization grant (RFC 8628): the headless alternative to the browser flow.
package struct DeviceAuthorizationClient: Sendable {
    package enum Event: Sendable {
        /// Still waiting for the person; `slowDown` when the provider asked to poll less often.
        case pending(interval: Duration, slowDown: Bool)
    }

    package var endpoint: URL
    package var tokenClient: TokenEndpointClient
    /// How waiting is done (tests substitute a fast one).
    package var sleep: @Sendable (Duration) async throws -> Void

    package init(
        endpoint: URL, tokenClient: TokenEndpointClient,
        sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }
    ) {
        self.endpoint = endpoint
        self.tokenClient = tokenClient
        self.sleep = sleep
    }

    /// Asks for a device code and user code (RFC 8628 §3.1).
    package func start(scopes: [String]) async throws(DeviceFlowError) -> DeviceAuthorization {
        let response: HTTPResponse
        do {
            response = try await tokenClient.post([("scope", scopes.joined(separator: " "))], to: endpoint, proved: false)
        } catch {
            throw .request(error)
        }
        guard response.status == 200 else {
            throw .request(TokenEndpointError.oauthError(body: response.body, status: response.status) ?? .httpStatus(response.status))
        }
        struct Raw: Decodable {
            var device_code: String?
            var user_code: String?
            var verification_uri: String?
            var verification_url: String?  // Google's spelling
            var verification_uri_complete: String?
            var expires_in: LenientInteger?
            var interval: LenientInteger?
        }
        let raw: Raw
        do throws(JSONDocumentError) {
            raw = try JSONDocument.deviceAuthorization.decode(Raw.self, from: response.body)
        } catch {
            throw .malformedResponse(error.reason)
        }
        guard let deviceCode = raw.device_code, !deviceCode.isEmpty else { throw .malformedResponse("it has no device_code") }
        guard let userCode = ProviderText.clean(raw.user_code, limit: 64) else { throw .malformedResponse("it has no user_code") }
        guard let uriText = raw.verification_uri ?? raw.verification_url else {
            throw .malformedResponse("it has no verification_uri")
        }
        let verificationURI: URL
        do { verificationURI = try EndpointPolicy.check(uriText, name: "verification_uri") } catch {
            throw .malformedResponse("\(error)")
        }
        let complete = raw.verification_uri_complete.flatMap { try? EndpointPolicy.check($0, name: "verification_uri_complete") }
        guard let stated = raw.expires_in?.value, stated > 0 else { throw .malformedResponse("it has no expires_in") }
        // RFC 8628 codes live minutes; a day is plenty, and no stated number can overflow a date.
        let expiresIn = min(stated, 24 * 3600)
        // The provider's interval is a MUST (RFC 8628 §3.5); ten minutes bounds a silly one,
        // and no pause outlasts the code or the sign-in's timeout (below).
        let interval = max(1, min(raw.interval?.value ?? 5, 600))
        return DeviceAuthorization(
            deviceCode: deviceCode, userCode: userCode, verificationURI: verificationURI,
            verificationURIComplete: complete, expiresAt: tokenClient.clock().addingTimeInterval(TimeInterval(expiresIn)),
            interval: .seconds(interval))
    }

    /// Polls the token endpoint at the advertised interval until the person approves,
    /// declines, or the code expires (RFC 8628 §3.4–3.5).
    package func waitForTokens(
        _ authorization: DeviceAuthorization, onEvent: @escaping @Sendable (Event) -> Void = { _ in }
    ) async throws(DeviceFlowError) -> TokenResponse {
        var interval = authorization.interval
        while true {
            // Never sleep past the end: a provider's interval of 60 s must not outlast a 10 s
            // timeout.
            let left = authorization.expiresAt.timeIntervalSince(tokenClient.clock())
            guard left > 0 else { throw .expired }
            let pause = min(interval, .milliseconds(Int64(min(left, 3600) * 1000)))
            do { try await sleep(pause) } catch { throw .cancelled }
            if Task.isCancelled { throw .cancelled }
            guard tokenClient.clock() < authorization.expiresAt else { throw .expired }
            do {
                return try await tokenClient.request([
                    ("grant_type", "urn:ietf:params:oauth:grant-type:device_code"),
                    ("device_code", authorization.deviceCode),
                ])
            } catch {
                switch error {
                case .oauth("authorization_pending", _, _):
                    onEvent(.pending(interval: interval, slowDown: false))
                case .oauth("slow_down", _, _):
                    interval += .seconds(5)
                    onEvent(.pending(interval: interval, slowDown: true))
                case .oauth("expired_token", _, _):
                    throw .expired
                case .oauth("access_denied", _, _):
                    throw .denied
                case .transport(let transport) where transport.isSafeToRetry:
                    // The provider was briefly unreachable: keep polling until the code expires.
                    onEvent(.pending(interval: interval, slowDown: false))
                default:
                    throw .request(error)
                }
            }
        }
    }
}
