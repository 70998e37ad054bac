import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One HTTP answer as tests see it.
public struct TestHTTPResponse: Sendable {
    public var status: Int
    /// Header names lower-cased.
    public var headers: [String: String]
    public var body: Data

    public var text: String { String(decoding: body, as: UTF8.self) }

    public func json() throws -> PeerJSON { try PeerJSON(data: body) }
}

public enum TestHTTPError: Error, CustomStringConvertible {
    case notLoopback(URL)
    case transport(String)

    public var description: String {
        switch self {
        case .notLoopback(let url): return "tests only talk to 127.0.0.1/::1, not \(url.host ?? "?")"
        case .transport(let reason): return "HTTP request failed: \(reason)"
        }
    }
}

/// Raw HTTP for the peer tests and control APIs (URLSession; test-only, so Foundation's
/// networking is fine here). Loopback only, bounded time, no redirects followed.
public enum TestHTTP {
    private static let session: URLSession = {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 15
        configuration.timeoutIntervalForResource = 30
        configuration.connectionProxyDictionary = [:]
        configuration.httpCookieStorage = nil
        return URLSession(configuration: configuration, delegate: NoRedirects(), delegateQueue: nil)
    }()

    /// `application/x-www-form-urlencoded` with RFC 3986 unreserved characters left as they are.
    public static func formEncode(_ fields: [(String, String)]) -> String {
        var allowed = CharacterSet.alphanumerics.intersection(CharacterSet(charactersIn: Unicode.Scalar(0)..<Unicode.Scalar(128)))
        allowed.insert(charactersIn: "-._~")
        return fields.map { key, value in
            let k = key.addingPercentEncoding(withAllowedCharacters: allowed) ?? key
            let v = value.addingPercentEncoding(withAllowedCharacters: allowed) ?? value
            return "\(k)=\(v)"
        }.joined(separator: "&")
    }

    public static func get(_ url: URL, headers: [String: String] = [:]) async throws -> TestHTTPResponse {
        try await request("GET", url, headers: headers)
    }

    /// A form POST; `basicAuth` is `(user, password)` for client_secret_basic.
    public static func postForm(
        _ url: URL, _ fields: [(String, String)], basicAuth: (String, String)? = nil, headers: [String: String] = [:]
    ) async throws -> TestHTTPResponse {
        var all = headers
        all["Content-Type"] = "application/x-www-form-urlencoded"
        if let (user, password) = basicAuth {
            // RFC 6749 §2.3.1: form-encode each part before Base64.
            let credentials = "\(formEncode([(user, "")]).dropLast()):\(formEncode([(password, "")]).dropLast())"
            all["Authorization"] = "Basic " + Data(credentials.utf8).base64EncodedString()
        }
        return try await request("POST", url, body: Data(formEncode(fields).utf8), headers: all)
    }

    public static func request(
        _ method: String, _ url: URL, json: PeerJSON? = nil, body: Data? = nil, headers: [String: String] = [:]
    ) async throws -> TestHTTPResponse {
        guard let host = url.host, ["127.0.0.1", "::1", "[::1]", "localhost"].contains(host) else {
            throw TestHTTPError.notLoopback(url)
        }
        var request = URLRequest(url: url)
        request.httpMethod = method
        for (key, value) in headers { request.setValue(value, forHTTPHeaderField: key) }
        if let json {
            request.httpBody = json.data
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        } else if let body {
            request.httpBody = body
        }
        let request_ = request
        return try await withCheckedThrowingContinuation { continuation in
            let task = session.dataTask(with: request_) { data, response, error in
                if let error {
                    continuation.resume(throwing: TestHTTPError.transport("\(method) \(url.path): \(error.localizedDescription)"))
                    return
                }
                guard let http = response as? HTTPURLResponse else {
                    continuation.resume(throwing: TestHTTPError.transport("\(method) \(url.path): no HTTP response"))
                    return
                }
                var headers: [String: String] = [:]
                for (key, value) in http.allHeaderFields {
                    headers[String(describing: key).lowercased()] = String(describing: value)
                }
                continuation.resume(returning: TestHTTPResponse(status: http.statusCode, headers: headers, body: data ?? Data()))
            }
            task.resume()
        }
    }

    /// The query items of a URL as a dictionary (last value wins).
    public static func queryItems(_ url: URL) -> [String: String] {
        var result: [String: String] = [:]
        for item in URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems ?? [] {
            result[item.name] = item.value ?? ""
        }
        return result
    }
}

private final class NoRedirects: NSObject, URLSessionTaskDelegate, @unchecked Sendable {
    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }
}
