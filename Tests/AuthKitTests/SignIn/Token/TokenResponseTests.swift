import Foundation
import Testing
@testable import AuthKit

/// Token answers (code grant, refresh, device) are read strictly: a member twice, a token no
/// header can carry, a scope RFC 6749 does not allow — refused as malformed, naming what,
/// never quoting a token.
@Suite struct TokenResponseTests {
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    func parse(_ text: String) throws(TokenEndpointError) -> TokenResponse {
        try TokenResponse(body: Array(text.utf8), receivedAt: now)
    }

    func malformedReason(_ text: String) -> String? {
        do {
            _ = try parse(text)
            return nil
        } catch {
            guard case .malformedResponse(let reason) = error else { return "other: \(error)" }
            return reason
        }
    }

    @Test func readsAWellFormedAnswer() throws {
        let response = try parse(
            #"{"access_token":"AT.a-b_c~d+e/f==","token_type":"bearer","expires_in":"3599","refresh_token":"1//0gRT","id_token":"h.p.s","scope":"openid https://graph.microsoft.com/User.Read"}"#
        )
        #expect(response.expiresIn == 3599)
        #expect(response.scopes == ["openid", "https://graph.microsoft.com/User.Read"])
        #expect(response.refreshToken == "1//0gRT")
    }

    @Test(arguments: ["access_token", "refresh_token", "id_token", "token_type", "expires_in", "scope"])
    func refusesAMemberSentTwice(member: String) {
        let values = [
            "access_token": #""first-AT""#, "refresh_token": #""first-RT""#, "id_token": #""a.b.c""#, "token_type": #""Bearer""#,
            "expires_in": "3600", "scope": #""openid""#,
        ]
        var text = "{" + values.map { "\"\($0.key)\":\($0.value)" }.joined(separator: ",")
        text += ",\"\(member)\":\"second-value\"}"
        let reason = malformedReason(text)
        #expect(reason?.contains("duplicate member name ‘\(member)’") == true, "\(reason ?? "accepted")")
        #expect(reason?.contains("second-value") != true && reason?.contains("first-AT") != true)
    }

    @Test(arguments: ["AT\r\nX-Injected: yes", "AT with space", "AT\u{0}", "AT\u{7F}", "ÄT", "AT\u{1B}[2J"])
    func refusesATokenNoHeaderCanCarry(token: String) throws {
        for member in ["access_token", "refresh_token"] {
            var object: [String: Any] = ["access_token": "AT", "token_type": "Bearer", "refresh_token": "RT"]
            object[member] = token
            let text = String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self)
            let reason = malformedReason(text)
            #expect(reason?.contains("its \(member) contains spaces, control or non-ASCII characters") == true, "\(reason ?? "accepted")")
        }
    }

    @Test(arguments: [#"open\"id"#, "a\\\\b", "\\u00e9", "x\\u001b"])
    func refusesAScopeOutsideRFC6749(scope: String) {
        let reason = malformedReason(#"{"access_token":"AT","token_type":"Bearer","scope":"openid "# + scope + #""}"#)
        #expect(reason?.contains("scope tokens") == true, "\(reason ?? "accepted")")
    }

    /// No trap on a number from outside: clamped to a year, negative and non-integers refused.
    @Test(arguments: [
        ("9223372036854775807", 31_536_000), ("31536001", 31_536_000), ("0", 0), ("3600", 3600), ("3600.0", 3600), ("1e300", 31_536_000),
        ("9.3e18", 31_536_000), ("\"9223372036854775807\"", 31_536_000),
    ])
    func clampsTheLifetime(expiresIn: String, expected: Int) throws {
        let response = try parse(#"{"access_token":"AT","token_type":"Bearer","expires_in":"# + expiresIn + "}")
        #expect(response.expiresIn == expected)
        #expect(response.expiresAt == now.addingTimeInterval(TimeInterval(expected)))
    }

    @Test(arguments: ["-1", "-1e300", "1.5", "\"soon\"", "true", "\"9223372036854775808\""])
    func refusesAnUnusableLifetime(expiresIn: String) {
        #expect(malformedReason(#"{"access_token":"AT","token_type":"Bearer","expires_in":"# + expiresIn + "}") != nil)
    }
}
