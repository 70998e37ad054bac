import AuthKitCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Temporary AWS credentials (a cloud credential: never printed but by `credential aws`,
/// never logged).
package struct AWSCredentials: Sendable, Equatable, Codable, CustomStringConvertible {
    package var accessKeyID: String
    package var secretAccessKey: String
    package var sessionToken: String
    /// Unix seconds.
    package var expiration: Double

    package var description: String { "AWSCredentials(expires \(Int(expiration)))" }

    enum CodingKeys: String, CodingKey {
        case accessKeyID = "access_key_id", secretAccessKey = "secret_access_key", sessionToken = "session_token", expiration
    }

    /// Every value is one a header or a JSON document can carry as it is.
    var isWellFormed: Bool {
        [accessKeyID, secretAccessKey, sessionToken].allSatisfy(TokenText.isTransportable) && expiration.isFinite && expiration > 0
    }
}

/// AWS STS `AssumeRoleWithWebIdentity`: a verified id_token in, temporary credentials out.
/// The request is unsigned (the id_token is the credential); the answer is STS's XML, read with
/// ``StrictXMLElement`` within its limits.
package enum STSWebIdentity {
    /// Why no credentials came back, with how a program should treat it.
    package struct Failure: Error, Sendable, CustomStringConvertible {
        package var description: String
        package var category: AuthKitError.Category
    }

    /// The longest STS credentials live (DurationSeconds' maximum, 12 hours): the expiry
    /// believed when no duration was asked for.
    package static let maximumDuration = 43_200

    /// `AWS_REGION`, else `AWS_DEFAULT_REGION`, when set: a region name (letters, digits and
    /// `-`, at most 32), checked here for every use — a host name, and a word of the stored
    /// credentials' kind, which a space or a line would make unreadable to `logout`.
    package static func region(environment: [String: String]) throws(Failure) -> String? {
        guard let region = (environment["AWS_REGION"] ?? environment["AWS_DEFAULT_REGION"]).flatMap({ $0.isEmpty ? nil : $0 })
        else { return nil }
        guard region.utf8.count <= 32, region.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }) else {
            throw Failure(description: "AWS_REGION ‘\(ProviderText.displayable(region))’ is not a region name", category: .usage)
        }
        return region
    }

    /// Where STS is, as the AWS SDKs decide it: `AWS_ENDPOINT_URL_STS`, then
    /// `AWS_ENDPOINT_URL`, then the regional endpoint of `AWS_REGION` (or
    /// `AWS_DEFAULT_REGION`), else the global `https://sts.amazonaws.com`. https only (http
    /// for loopback, for a local STS).
    ///
    /// `AWS_ENDPOINT_URL` names every service's endpoint (an S3 look-alike's, say), and the
    /// id_token sent to STS would let whoever runs it take the role: it is taken only when it
    /// is AWS's own or on loopback (LocalStack); any other needs `AWS_ENDPOINT_URL_STS`.
    /// `AWS_IGNORE_CONFIGURED_ENDPOINT_URLS=true` ignores both, as for the SDKs.
    package static func endpoint(environment: [String: String]) throws(Failure) -> URL {
        let ignored = environment["AWS_IGNORE_CONFIGURED_ENDPOINT_URLS"]?.lowercased() == "true"
        for name in ["AWS_ENDPOINT_URL_STS", "AWS_ENDPOINT_URL"] where !ignored {
            guard let text = environment[name], !text.isEmpty else { continue }
            let url: URL
            do { url = try EndpointPolicy.check(text, name: name) } catch {
                throw Failure(description: error.description, category: .usage)
            }
            if name == "AWS_ENDPOINT_URL", let host = url.host(percentEncoded: true)?.lowercased(),
                !EndpointPolicy.isLoopback(host: host), !(host.hasSuffix(".amazonaws.com") || host.hasSuffix(".amazonaws.com.cn"))
            {
                throw Failure(
                    description: "AWS_ENDPOINT_URL names \(url.redactedOrigin), not AWS: credential aws sends your id_token only to an STS "
                        + "that AWS_ENDPOINT_URL_STS names (set it, e.g. to https://sts.amazonaws.com, or to that host if it is your STS)",
                    category: .usage)
            }
            return url
        }
        if let region = try Self.region(environment: environment) {
            if let url = URL(string: "https://sts.\(region.lowercased()).amazonaws.com\(region.hasPrefix("cn-") ? ".cn" : "")/") {
                return url
            }
        }
        return URL(string: "https://sts.amazonaws.com/") ?? URL(fileURLWithPath: "/")
    }

    /// A RoleSessionName from an account name: `[\w+=,.@-]{2,64}`.
    package static func sessionName(for account: String) -> String {
        let allowed = account.map { character -> Character in
            character.isASCII && (character.isLetter || character.isNumber || "_+=,.@-".contains(character)) ? character : "-"
        }
        let name = "authkit-" + String(allowed)
        return String(name.prefix(64))
    }

    package static func assumeRole(
        roleARN: String, sessionName: String, webIdentityToken: String, durationSeconds: Int?, endpoint: URL, transport: any HTTPTransport
    ) async throws(Failure) -> AWSCredentials {
        var fields: [(name: String, value: String)] = [
            ("Action", "AssumeRoleWithWebIdentity"), ("Version", "2011-06-15"), ("RoleArn", roleARN),
            ("RoleSessionName", sessionName), ("WebIdentityToken", webIdentityToken),
        ]
        if let durationSeconds { fields.append(("DurationSeconds", String(durationSeconds))) }
        var request = HTTPRequest.form(endpoint, fields: fields, timeout: .seconds(30), maxResponseBytes: 64 << 10)
        request.headers.replace("Accept", with: "application/xml")
        let response: HTTPResponse
        do { response = try await transport.send(request) } catch {
            throw Failure(description: "AWS STS at \(endpoint.redactedOrigin) could not be reached: \(error)", category: .provider)
        }
        let document: StrictXMLElement
        do {
            document = try StrictXMLElement(parsing: response.body, limits: StrictXMLElement.Limits())
        } catch {
            throw Failure(description: "AWS STS answered HTTP \(response.status) with \(error)", category: .provider)
        }
        guard response.status == 200 else {
            let code = document.first("Code")?.text ?? "HTTP \(response.status)"
            let message = ProviderText.clean(document.first("Message")?.text) ?? ""
            // The id_token was refused: the role's trust policy, or the provider's keys.
            let category: AuthKitError.Category =
                ["AccessDenied", "InvalidIdentityToken", "ExpiredTokenException", "IDPRejectedClaim"]
                    .contains(code) ? .configurationRejected : .provider
            // What a refusal of the token almost always means, and where the values are.
            let likely =
                category == .configurationRejected
                ? "; the IAM OIDC identity provider's URL must be exactly the issuer `authkit status` shows (tenant-specific "
                    + "for Entra), its audience the client id `authkit status` shows, and the role's trust policy must allow "
                    + "that provider and audience" : ""
            throw Failure(
                description: "AWS STS refused AssumeRoleWithWebIdentity for \(ProviderText.displayable(roleARN)): "
                    + "\(ProviderText.displayable(code))\(message.isEmpty ? "" : ": " + message)\(likely)",
                category: category)
        }
        guard let credentials = document.first("Credentials"), let key = credentials.childText("AccessKeyId"),
            let secret = credentials.childText("SecretAccessKey"), let session = credentials.childText("SessionToken"),
            let expirationText = credentials.childText("Expiration"), let expiration = RFC3339.seconds(expirationText)
        else { throw Failure(description: "AWS STS's answer holds no complete Credentials", category: .provider) }
        let result = AWSCredentials(
            accessKeyID: key.trimmingWhitespace, secretAccessKey: secret.trimmingWhitespace, sessionToken: session.trimmingWhitespace,
            expiration: expiration)
        guard result.isWellFormed else {
            throw Failure(description: "AWS STS's credentials contain characters no credential has", category: .provider)
        }
        return result
    }
}

extension String {
    fileprivate var trimmingWhitespace: String {
        var scalars = Substring(self)
        while let first = scalars.first, first.isWhitespace { scalars.removeFirst() }
        while let last = scalars.last, last.isWhitespace { scalars.removeLast() }
        return String(scalars)
    }
}

/// RFC 3339 / ISO 8601 UTC times as AWS writes them (`2026-11-25T21:13:00Z`, with optional
/// fractional seconds or a numeric offset).
package enum RFC3339 {
    package static func seconds(_ text: String) -> Double? {
        let bytes = Array(text.utf8)
        func number(_ range: Range<Int>) -> Int? {
            guard range.upperBound <= bytes.count else { return nil }
            var value = 0
            for byte in bytes[range] {
                guard byte >= 0x30 && byte <= 0x39 else { return nil }
                value = value * 10 + Int(byte - 0x30)
            }
            return value
        }
        guard bytes.count >= 20, let year = number(0..<4), bytes[4] == 0x2D, let month = number(5..<7), bytes[7] == 0x2D,
            let day = number(8..<10), bytes[10] == 0x54 || bytes[10] == 0x74, let hour = number(11..<13), bytes[13] == 0x3A,
            let minute = number(14..<16), bytes[16] == 0x3A, let second = number(17..<19),
            (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61
        else { return nil }
        var index = 19
        if index < bytes.count, bytes[index] == 0x2E {
            index += 1
            while index < bytes.count, bytes[index] >= 0x30 && bytes[index] <= 0x39 { index += 1 }
        }
        var offset = 0
        guard index < bytes.count else { return nil }
        switch bytes[index] {
        case 0x5A, 0x7A: index += 1
        case 0x2B, 0x2D:
            guard let hours = number((index + 1)..<(index + 3)), bytes.count > index + 3, bytes[index + 3] == 0x3A,
                let minutes = number((index + 4)..<(index + 6))
            else { return nil }
            offset = (hours * 60 + minutes) * 60 * (bytes[index] == 0x2B ? 1 : -1)
            index += 6
        default: return nil
        }
        guard index == bytes.count else { return nil }
        // Days from civil (Howard Hinnant).
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        let days = era * 146_097 + doe - 719_468
        return Double(days * 86400 + hour * 3600 + minute * 60 + second - offset)
    }
}
