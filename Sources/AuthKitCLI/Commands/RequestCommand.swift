import ArgumentParser
import AuthKit
import AuthKitCore
import StrictJSON

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `authkit request`: one HTTP request with the shared sign-in's token, as `gh api` and
/// `az rest` make them — DPoP-bound where the sign-in is.
struct RequestCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "request",
        abstract: "Send an HTTP request with the sign-in's token; print the response body.",
        usage: "authkit request [--method <method>] [--header 'Name: value'] … [--data <data>] <url> [<options>]",
        discussion: """
            Sends the group's access token to URL — as `Authorization: Bearer …`, or for a \
            DPoP sign-in (RFC 9449) as `Authorization: DPoP …` with a proof signed by the \
            sign-in's key (by the agent, where the sign-in comes from one: the key never leaves \
            the machine that holds it). A server that answers for a new DPoP nonce gets the \
            request once more with it. The response body goes to standard output as it came; \
            --include puts the status line and headers before it.

            Exit status: 0 for HTTP 1xx–3xx; 22 for HTTP 400 or more (as curl --fail), with \
            one line on standard error; the usual codes when there is no token (1: sign in, \
            3: the store, 4: the provider or the network).

            --data DATA sends DATA (@FILE: the file's bytes, @-: standard input) and makes the \
            method POST unless --method says otherwise; its Content-Type is application/json \
            when DATA is JSON, else application/x-www-form-urlencoded, unless a --header sets \
            one. Authorization and DPoP headers are authkit's own.

            Examples:
              authkit request https://openidconnect.googleapis.com/v1/userinfo
              authkit request --method PATCH --data '{"displayName":"Ada"}' https://graph.example/v1.0/me
              authkit request --include --header 'Accept: text/plain' https://api.example/status
            """
    )

    @OptionGroup var session: SessionOptions

    @Argument(help: ArgumentHelp("The URL (https, or http on loopback).", valueName: "url"))
    var url: String

    @Option(name: [.customShort("X"), .long], help: ArgumentHelp("The method (default GET, or POST with --data).", valueName: "method"))
    var method: String?

    @Option(
        name: [.customShort("H"), .customLong("header")], help: ArgumentHelp("A request header (repeatable).", valueName: "'Name: value'"))
    var headers: [String] = []

    @Option(
        name: [.customShort("d"), .long], help: ArgumentHelp("The request body; @FILE reads a file, @- standard input.", valueName: "data"))
    var data: String?

    @Flag(name: [.customShort("i"), .long], help: "Print the status line and response headers before the body.")
    var include = false

    @OptionGroup var accountOption: AccountOption

    @Option(
        name: .customLong("scope"),
        help: ArgumentHelp("Use a token for other or fewer scopes than the sign-in's (repeatable).", valueName: "scope"))
    var scopes: [String] = []

    @Option(
        name: .customLong(OptionName.resource),
        help: ArgumentHelp("Use a token for this API only (RFC 8707 resource indicator, repeatable).", valueName: "uri"))
    var resources: [String] = []

    @Option(help: ArgumentHelp("Give up after this many seconds.", valueName: "seconds"))
    var timeout: Int = 60

    /// Larger answers are refused.
    static let maximumResponseBytes = 32 << 20
    static let maximumDataBytes = 32 << 20

    func validate() throws {
        guard (1...3600).contains(timeout) else { throw ValidationError("--timeout must be between 1 and 3600 seconds") }
        try TokenRequest.checkResources(resources)
        if data != nil, let method, ["GET", "HEAD"].contains(method.uppercased()) {
            throw ValidationError(
                "--data sends a body, which \(method.uppercased()) has none of: leave out --method or use POST, PUT or PATCH")
        }
        if let method, HTTPRequest.Method(rawValue: method) == nil { throw ValidationError("‘\(method)’ is not an HTTP method") }
        // Said before any token is read (the library refuses them too).
        if let method, ResourceRequest.refusedMethods.contains(method.uppercased()) {
            throw ValidationError(
                "authkit request does not send \(method.uppercased()): the server would echo the token (TRACE) or tunnel it")
        }
        _ = try parsedHeaders()
        guard let parsed = URL(string: url), let scheme = parsed.scheme?.lowercased(), scheme == "https" || scheme == "http",
            parsed.host?.isEmpty == false
        else { throw ValidationError("‘\(url)’ is not an absolute http(s) URL") }
    }

    func parsedHeaders() throws -> HTTPHeaders {
        var parsed = HTTPHeaders()
        for header in headers {
            guard let colon = header.firstIndex(of: ":") else {
                throw ValidationError("a header is ‘Name: value’; ‘\(header)’ has no colon")
            }
            let name = String(header[..<colon]).trimmingASCIIWhitespace()
            let value = String(header[header.index(after: colon)...]).trimmingASCIIWhitespace()
            guard Self.isFieldName(name),
                value.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value != 0x7F })
            else { throw ValidationError("‘\(name)’ is not a header authkit can send") }
            guard !["authorization", "dpop"].contains(name.lowercased()) else {
                throw ValidationError("the \(name) header is authkit's own: it sends the sign-in's token (and proof) itself")
            }
            parsed.add(name, value)
        }
        return parsed
    }

    func run() async throws {
        guard let target = URL(string: url) else { throw ValidationError("‘\(url)’ is not an absolute http(s) URL") }
        var request = HTTPRequest(
            method: .get, url: target, headers: try parsedHeaders(), timeout: .seconds(timeout),
            maxResponseBytes: Self.maximumResponseBytes)
        if let data {
            let body = try Self.body(data)
            request.body = body
            request.method = .post
            if request.headers["Content-Type"] == nil {
                let isJSON = (try? JSONValue(parsing: body)) != nil
                request.headers.add("Content-Type", isJSON ? "application/json" : "application/x-www-form-urlencoded")
            }
        }
        if let method, let named = HTTPRequest.Method(rawValue: method) { request.method = named }
        let response: HTTPResponse
        do throws(AuthKitError) {
            let profile = try session.resolveProfile()
            let shared = try session.session(for: profile)
            response = try await shared.send(
                request, account: accountOption.account, scopes: scopes.isEmpty ? nil : scopes, resources: resources)
        } catch {
            throw failure(error, hint: error.category == .loginNeeded ? signInHint(session.settings) : nil)
        }
        if include {
            var head = "HTTP \(response.status)\r\n"
            for field in response.headers { head += "\(field.name): \(field.value)\r\n" }
            Terminal.writeBytes(fd: 1, Array((head + "\r\n").utf8))
        }
        Terminal.writeBytes(fd: 1, response.body)
        guard response.status < 400 else {
            let target = request.url.host.map { "\(request.url.scheme ?? "https")://\($0)" } ?? "the server"
            var line = "authkit: HTTP \(response.status) from \(target)\(request.url.path(percentEncoded: true))"
            if response.status == 401, let challenge = response.headers["WWW-Authenticate"] {
                line += " (\(ProviderText.clean(challenge, limit: 200) ?? ""))"
            }
            Terminal.printError(line)
            throw ExitStatus.httpError
        }
    }

    /// RFC 9110 §5.1: a field name is a token (letters, digits, `!#$%&'*+-.^_`|~`).
    static func isFieldName(_ name: String) -> Bool {
        let symbols = Set("!#$%&'*+-.^_`|~".utf8)
        return !name.isEmpty && name.utf8.count <= 256
            && name.utf8.allSatisfy {
                $0 < 0x80
                    && (symbols.contains($0) || (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0))
            }
    }

    /// `--data`'s bytes: as written, a file's (`@FILE`), or standard input's (`@-`).
    static func body(_ data: String) throws -> [UInt8] {
        guard data.hasPrefix("@") else { return Array(data.utf8) }
        let path = String(data.dropFirst())
        let bytes: [UInt8]
        do {
            bytes =
                try path == "-"
                ? InputFile.read(descriptor: 0, limit: maximumDataBytes) : InputFile.read(path: path, limit: maximumDataBytes)
        } catch {
            Terminal.printError("authkit: cannot read \(path == "-" ? "standard input" : path): \(error)")
            throw ExitStatus.usage
        }
        // Never a body cut short: more than the limit is an error, not its first part.
        guard bytes.count <= maximumDataBytes else {
            Terminal.printError("authkit: standard input is longer than \(maximumDataBytes >> 20) MiB, more than --data takes")
            throw ExitStatus.usage
        }
        return bytes
    }
}
