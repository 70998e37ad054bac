import AuthKitCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Which provider URLs authkit will talk to: `https`, or `http` only on loopback (a local
/// test provider, a development Keycloak). No user info, no fragment.
public enum EndpointPolicy {
    /// Why a provider URL was refused.
    public enum Violation: Error, Sendable, Equatable, CustomStringConvertible {
        /// Not an absolute URL with a host.
        case notAbsolute(name: String)
        /// Neither https nor http on a loopback address.
        case insecureScheme(name: String, url: String)
        /// Carries a user name or password.
        case hasUserInfo(name: String)
        /// Carries a `#fragment`.
        case hasFragment(name: String)

        public var description: String {
            switch self {
            case .notAbsolute(let name): return "\(name) is not an absolute http(s) URL"
            case .insecureScheme(let name, let url):
                return "\(name) \(url) does not use https; plain http is allowed only for 127.0.0.1, ::1 and localhost"
            case .hasUserInfo(let name): return "\(name) must not contain a user name or password"
            case .hasFragment(let name): return "\(name) must not contain a fragment (#…)"
            }
        }
    }

    /// Parses and checks a provider URL; `name` says which one in errors ("token_endpoint").
    package static func check(_ text: String, name: String) throws(Violation) -> URL {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), let host = url.host(percentEncoded: true), !host.isEmpty
        else { throw .notAbsolute(name: name) }
        guard url.user == nil, url.password == nil else { throw .hasUserInfo(name: name) }
        guard url.fragment == nil else { throw .hasFragment(name: name) }
        switch scheme {
        case "https": return url
        case "http" where isLoopback(host: host): return url
        case "http": throw .insecureScheme(name: name, url: "\(url.redactedOrigin)\(url.path(percentEncoded: true))")
        default: throw .notAbsolute(name: name)
        }
    }

    /// 127.0.0.0/8, ::1 and `localhost`.
    package static func isLoopback(host: String) -> Bool { PlainURL.isLoopback(host: host) }
}
