import CCurl
import Dispatch
import Synchronization

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#endif

/// HTTP through libcurl, opened with `dlopen` on the first request (never at start-up).
///
/// libcurl brings TLS with the system's OpenSSL and CA store, HTTP/2, and the proxy
/// variables (`https_proxy`, `http_proxy`, `all_proxy`, `no_proxy`) — the same engine
/// Foundation's URLSession uses on Linux, without loading it into every process.
/// Loopback hosts are never proxied. Redirects are never followed: a 3xx is returned to
/// the caller, which decides what it means.
public struct CurlHTTPTransport: HTTPTransport {
    /// A CA bundle to trust instead of the system store (tests, private CAs).
    public var caFile: String?
    /// Sent as `User-Agent` unless the request names one.
    public var userAgent: String

    /// A transport through libcurl (opened on first use).
    /// - Parameters:
    ///   - caFile: A PEM file of CA certificates to trust instead of the system's (tests).
    ///   - userAgent: The `User-Agent` header.
    public init(caFile: String? = nil, userAgent: String = "authkit/\(AuthKitVersion.current)") {
        self.caFile = caFile
        self.userAgent = userAgent
    }

    public func send(_ request: HTTPRequest) async throws(HTTPError) -> HTTPResponse {
        let host = request.url.redactedOrigin
        // Every request, whatever the URL came from (discovery, config, the stored record, a
        // Graph nextLink): https, or http to loopback only. A URL read back from the store is
        // thereby checked again right before a secret is sent to it.
        do throws(EndpointPolicy.Violation) {
            _ = try EndpointPolicy.check(request.url.absoluteString, name: "the URL")
        } catch {
            throw .invalidURL(error.description)
        }
        var headers = request.headers
        if headers["User-Agent"] == nil { headers.add("User-Agent", userAgent) }
        let job = CurlTransfer(
            method: request.method.rawValue,
            url: request.url.absoluteString,
            headers: headers.map { "\($0.name): \($0.value)" },
            body: request.body,
            timeoutMilliseconds: Self.milliseconds(request.timeout),
            maxResponseBytes: request.maxResponseBytes,
            caFile: caFile)

        let outcome: CurlTransfer.Outcome = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                // libcurl blocks; keep it off the cooperative thread pool.
                DispatchQueue.global(qos: .userInitiated).async {
                    continuation.resume(returning: job.perform())
                }
            }
        } onCancel: {
            job.cancel()
        }

        switch outcome {
        case .response(let status, let responseHeaders, let body):
            return HTTPResponse(status: status, headers: responseHeaders, body: body)
        case .failure(let failure, let message):
            throw Self.error(failure, message: message, host: host, request: request)
        }
    }

    private static func milliseconds(_ duration: Duration) -> Int {
        let (seconds, attoseconds) = duration.components
        return max(1, Int(seconds) * 1000 + Int(attoseconds / 1_000_000_000_000_000))
    }

    private static func error(_ failure: ak_http_failure, message: String, host: String, request: HTTPRequest) -> HTTPError {
        switch failure {
        case AK_HTTP_LIBRARY_UNAVAILABLE: return .libraryUnavailable(message)
        case AK_HTTP_BAD_URL: return .invalidURL("\(host): \(message)")
        case AK_HTTP_CANNOT_RESOLVE: return .cannotResolve(host: host, detail: message)
        case AK_HTTP_CANNOT_CONNECT: return .cannotConnect(host: host, detail: message)
        case AK_HTTP_TIMED_OUT:
            // Rounded up: "within 0 s" would read as a bug.
            let (seconds, attoseconds) = request.timeout.components
            return .timedOut(host: host, seconds: Int(seconds) + (attoseconds > 0 ? 1 : 0))
        case AK_HTTP_TLS: return .tls(host: host, detail: message)
        case AK_HTTP_TOO_LARGE: return .responseTooLarge(host: host, limit: request.maxResponseBytes)
        case AK_HTTP_ABORTED: return .cancelled
        case AK_HTTP_SEND_FAILED, AK_HTTP_RECEIVE_FAILED: return .connectionLost(host: host, detail: message)
        default: return .other(host: host, detail: message)
        }
    }
}

/// One libcurl transfer and the state its C callbacks write to. Used by exactly one thread
/// while it runs; `cancel()` may come from any thread.
final class CurlTransfer: Sendable {
    enum Outcome: Sendable {
        case response(status: Int, headers: HTTPHeaders, body: [UInt8])
        case failure(ak_http_failure, message: String)
    }

    let method: String
    let url: String
    let headers: [String]
    let body: [UInt8]?
    let timeoutMilliseconds: Int
    let maxResponseBytes: Int
    let caFile: String?
    /// A loopback address: never through a proxy.
    let direct: Bool
    private let cancelled = Atomic<Bool>(false)
    private let received = Mutex(Received())

    struct Received {
        var headers = HTTPHeaders()
        var body: [UInt8] = []
    }

    init(
        method: String, url: String, headers: [String], body: [UInt8]?, timeoutMilliseconds: Int,
        maxResponseBytes: Int, caFile: String?
    ) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeoutMilliseconds = timeoutMilliseconds
        self.maxResponseBytes = maxResponseBytes
        self.caFile = caFile
        direct = URL(string: url)?.host(percentEncoded: true).map(EndpointPolicy.isLoopback(host:)) ?? false
    }

    func cancel() {
        cancelled.store(true, ordering: .relaxed)
    }

    var isCancelled: Bool { cancelled.load(ordering: .relaxed) }

    func appendBody(_ chunk: UnsafeBufferPointer<UInt8>) {
        received.withLock { $0.body.append(contentsOf: chunk) }
    }

    /// One raw header line. A status line starts a new header block (interim 1xx responses,
    /// proxy CONNECT answers), so only the final block's fields remain.
    func appendHeaderLine(_ line: String) {
        let trimmed = line.trimmingASCIIWhitespace()
        received.withLock { state in
            if trimmed.hasPrefix("HTTP/") {
                state.headers = HTTPHeaders()
                return
            }
            guard let colon = trimmed.firstIndex(of: ":") else { return }
            let name = trimmed[..<colon].trimmingASCIIWhitespace()
            let value = trimmed[trimmed.index(after: colon)...].trimmingASCIIWhitespace()
            guard !name.isEmpty else { return }
            state.headers.add(name, value)
        }
    }

    func perform() -> Outcome {
        if isCancelled { return .failure(AK_HTTP_ABORTED, message: "cancelled") }
        let cHeaders: [UnsafeMutablePointer<CChar>?] = headers.map { strdup($0) }
        defer { cHeaders.forEach { free($0) } }
        let context = Unmanaged.passRetained(self)
        defer { context.release() }

        var result = ak_http_result()
        let status: Int32 = method.withCString { cMethod in
            url.withCString { cURL in
                withOptionalCString(caFile) { cCAFile in
                    cHeaders.map { UnsafePointer($0) }.withUnsafeBufferPointer { headerPointers in
                        withOptionalBytes(body) { bodyPointer, bodyCount in
                            var request = ak_http_request()
                            request.method = cMethod
                            request.url = cURL
                            request.headers = headerPointers.baseAddress
                            request.header_count = headerPointers.count
                            request.body = bodyPointer
                            request.body_length = bodyCount
                            request.timeout_ms = timeoutMilliseconds
                            request.connect_timeout_ms = min(timeoutMilliseconds, 10_000)
                            request.max_response_bytes = Int64(maxResponseBytes)
                            request.ca_file = cCAFile
                            request.direct = direct ? 1 : 0
                            request.context = context.toOpaque()
                            request.on_header = { context, line, length in
                                guard let context, let line else { return 0 }
                                let transfer = Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue()
                                let bytes = UnsafeRawBufferPointer(start: line, count: length)
                                transfer.appendHeaderLine(String(decoding: bytes, as: UTF8.self))
                                return 0
                            }
                            request.on_body = { context, data, length in
                                guard let context, let data else { return 0 }
                                let transfer = Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue()
                                transfer.appendBody(UnsafeBufferPointer(start: data, count: length))
                                return 0
                            }
                            request.should_abort = { context in
                                guard let context else { return 0 }
                                let transfer = Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue()
                                return transfer.isCancelled ? 1 : 0
                            }
                            return ak_http_perform(&request, &result)
                        }
                    }
                }
            }
        }
        if status != 0 {
            let message = withUnsafeBytes(of: result.message) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            return .failure(result.failure, message: message)
        }
        let final = received.withLock { $0 }
        return .response(status: result.status, headers: final.headers, body: final.body)
    }
}

private func withOptionalCString<R>(_ string: String?, _ body: (UnsafePointer<CChar>?) -> R) -> R {
    guard let string else { return body(nil) }
    return string.withCString { body($0) }
}

private func withOptionalBytes<R>(_ bytes: [UInt8]?, _ body: (UnsafePointer<UInt8>?, Int) -> R) -> R {
    guard let bytes else { return body(nil, 0) }
    return bytes.withUnsafeBufferPointer { body($0.baseAddress, $0.count) }
}
