import Foundation
import JOSE
import Testing
@testable import AuthKit

@Suite struct DPoPProofTests {
    /// RFC 9449 §4.1's example proof, which verifies with the key in its own header.
    static let rfcProof =
        "eyJ0eXAiOiJkcG9wK2p3dCIsImFsZyI6IkVTMjU2IiwiandrIjp7Imt0eSI6IkVDIiwieCI6Imw4dEZyaHgtMzR0VjNoUklDUkRZOXpDa0RscEJoRjQyVVFVZldWQVdCRnMiLCJ5IjoiOVZFNGpmX09rX282NHpiVFRsY3VOSmFqSG10NnY5VERWclUwQ2R2R1JEQSIsImNydiI6IlAtMjU2In19"
        + ".eyJqdGkiOiItQndDM0VTYzZhY2MybFRjIiwiaHRtIjoiUE9TVCIsImh0dSI6Imh0dHBzOi8vc2VydmVyLmV4YW1wbGUuY29tL3Rva2VuIiwiaWF0IjoxNTYyMjYyNjE2fQ"
        + ".2-GxA6T8lP4vfrg8v-FdWP0A0zdrj8igiMLvqRMUvwnQg4PtFLbdLXiOSsX0x7NVY-FNyJK70nfbV37xRZT3Lg"

    /// The header's key, as the verification path reads any key.
    static func headerKey(_ token: String) throws -> JWK {
        guard case .object(let jwk)? = try parts(token).header["jwk"] else { throw JOSEError.malformedToken("no jwk") }
        return try JWK(object: jwk)
    }

    static func parts(_ token: String) throws -> (header: JSONObject, claims: JSONObject) {
        let segments = token.split(separator: ".", omittingEmptySubsequences: false)
        guard segments.count == 3, case .object(let header) = try JSONValue(parsing: Base64URL.decode(segments[0])),
            case .object(let claims) = try JSONValue(parsing: Base64URL.decode(segments[1]))
        else { throw JOSEError.malformedToken("not a JWS of objects") }
        return (header, claims)
    }

    @Test func theRFCsExampleProofVerifiesThroughTheVerifier() throws {
        let key = try Self.headerKey(Self.rfcProof)
        #expect(try key.thumbprint() == "0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I")
        _ = try JWSVerifier(allowedAlgorithms: [.es256]).verify(Self.rfcProof, keys: JWKSet(keys: [key]))
    }

    @Test func ourProofHasTheRFCsShape() throws {
        let key = try SigningKey.generate()
        let proof = try DPoPProof(method: "POST", url: try #require(URL(string: "https://server.example.com/token")))
        let token = try proof.signed(with: key, issuedAt: Date(timeIntervalSince1970: 1_562_262_616))
        let (header, claims) = try Self.parts(token)
        let (rfcHeader, rfcClaims) = try Self.parts(Self.rfcProof)
        #expect(Set(header.map(\.key)) == Set(rfcHeader.map(\.key)))
        #expect(header["typ"] == .string("dpop+jwt") && header["alg"] == .string("ES256"))
        #expect(Set(claims.map(\.key)) == Set(rfcClaims.map(\.key)))
        #expect(claims["htm"] == rfcClaims["htm"] && claims["htu"] == rfcClaims["htu"] && claims["iat"] == rfcClaims["iat"])
        // The header's key is the public half only, and the proof verifies with it.
        let headerKey = try Self.headerKey(token)
        #expect(try headerKey.thumbprint() == key.publicKey.thumbprint())
        guard case .object(let jwk)? = header["jwk"] else { throw JOSEError.malformedToken("no jwk") }
        #expect(jwk["d"] == nil)
        _ = try JWSVerifier(allowedAlgorithms: [.es256]).verify(token, keys: JWKSet(keys: [headerKey]))
        // A fresh jti for every proof.
        let again = try Self.parts(try proof.signed(with: key, issuedAt: Date()))
        #expect(again.claims["jti"] != claims["jti"])
        #expect(claims["jti"]?.stringValue?.count == 22)
    }

    @Test func athIsTheRFCsHashOfTheAccessToken() throws {
        // RFC 9449 §7.1.
        #expect(try DPoPProof.hash(of: "Kz~8mXK1EalYznwH-LC-1fBAo.4Ljp~zsPE_NeO.gxU") == "fUHyO2r2Z3DZ53EsNrWBb0xWXoaNy59IiKCAqksmQEo")
        let proof = try DPoPProof(
            method: "GET", url: try #require(URL(string: "https://resource.example.org/protectedresource")),
            accessTokenHash: "fUHyO2r2Z3DZ53EsNrWBb0xWXoaNy59IiKCAqksmQEo", nonce: "eyJ7S_zG.eyJH0-Z.HX4w-7v")
        let claims = try Self.parts(try proof.signed(with: SigningKey.generate(), issuedAt: Date())).claims
        #expect(claims["ath"] == .string("fUHyO2r2Z3DZ53EsNrWBb0xWXoaNy59IiKCAqksmQEo"))
        #expect(claims["nonce"] == .string("eyJ7S_zG.eyJH0-Z.HX4w-7v"))
    }

    @Test(arguments: [
        ("https://Server.Example.com/token?code=1#frag", "https://server.example.com/token"),
        ("https://server.example.com:443/a/b", "https://server.example.com/a/b"),
        ("http://127.0.0.1:8080/userinfo?x", "http://127.0.0.1:8080/userinfo"),
        ("https://user:pw@server.example.com/p%20q", "https://server.example.com/p%20q"),
        ("https://server.example.com", "https://server.example.com/"),
        ("http://[::1]:9/x", "http://[::1]:9/x"),
    ])
    func theTargetHasNoQueryFragmentOrUser(url: String, target: String) throws {
        #expect(DPoPProof.target(of: try #require(URL(string: url))) == target)
    }

    @Test func refusesWhatAProofCannotName() throws {
        let url = try #require(URL(string: "https://server.example.com/x"))
        #expect(throws: DPoPError.self) { try DPoPProof(method: "GE T", url: url) }
        #expect(throws: DPoPError.self) { try DPoPProof(method: "GET", url: try #require(URL(string: "ftp://server.example.com/x"))) }
        #expect(throws: DPoPError.self) { try DPoPProof(method: "GET", url: url, accessTokenHash: "short") }
        #expect(throws: DPoPError.self) { try DPoPProof(method: "GET", url: url, nonce: "with space") }
        #expect(throws: DPoPError.self) { try DPoPProof(method: "GET", url: url, nonce: "quote\"") }
    }

    @Test func aTargetIsPlainOnlyInNormalForm() {
        for target in ["https://api.example/", "https://api.example/v1/me", "https://api.example/a%2Fb", "https://api.example/%E2%82%AC"] {
            #expect(DPoPProof.isPlainTarget(target), "\(target)")
        }
        for target in [
            "https://api.example/%74oken", "https://api.example/./token", "https://api.example/x/../token", "https://api.example/%2e%2e/x",
            "https://api.ex%61mple/", "https://api.example/%zz", "https://api.example/%4", "api.example/x",
        ] {
            #expect(!DPoPProof.isPlainTarget(target), "\(target)")
        }
    }

    @Test func spellingsAServerMayRouteAlikeHaveOneRouteKey() {
        let key = DPoPProof.routeKey(of: "https://login.example/realms/x/token")
        for target in [
            "https://login.example/realms/x/token/", "https://login.example//realms/x/token", "https://login.example/realms/x/token;a=b",
            "https://LOGIN.example./realms/X/Token", "HTTPS://login.example/realms/x/token",
        ] {
            #expect(DPoPProof.routeKey(of: target) == key, "\(target)")
        }
        #expect(DPoPProof.routeKey(of: "https://login.example:8443/realms/x/token") != key)
        #expect(DPoPProof.routeKey(of: "https://login.example./realms/x/token") == key)
        #expect(DPoPProof.routeKey(of: "https://login.example/realms/x/userinfo") != key)
    }

    @Test func noncesAreKeptPerOriginAndOnlyWhenWellFormed() throws {
        let nonces = DPoPNonces()
        let a = try #require(URL(string: "https://a.example/token"))
        let other = try #require(URL(string: "https://a.example:8443/token"))
        #expect(nonces.remember(HTTPResponse(status: 400, headers: HTTPHeaders([("DPoP-Nonce", "n-1")])), from: a))
        #expect(!nonces.remember(HTTPResponse(status: 200, headers: HTTPHeaders([("DPoP-Nonce", "n-1")])), from: a))
        #expect(nonces.nonce(for: try #require(URL(string: "https://a.example/userinfo?q"))) == "n-1")
        #expect(nonces.nonce(for: try #require(URL(string: "HTTPS://A.example:443/other"))) == "n-1", "the same origin, normalized")
        #expect(nonces.nonce(for: other) == nil)
        #expect(!nonces.remember(HTTPResponse(status: 200, headers: HTTPHeaders([("DPoP-Nonce", "bad nonce")])), from: other))
        #expect(
            !nonces.remember(
                HTTPResponse(status: 200, headers: HTTPHeaders([("DPoP-Nonce", String(repeating: "n", count: 600))])), from: other))
        #expect(nonces.nonce(for: other) == nil)
    }

    @Test func aResourceServersNonceChallengeIsRecognised() {
        func asks(_ values: [String]) -> Bool {
            ResourceRequest.asksForNonce(HTTPResponse(status: 401, headers: HTTPHeaders(values.map { ("WWW-Authenticate", $0) })))
        }
        #expect(asks([#"DPoP error="use_dpop_nonce", error_description="Resource server requires nonce in DPoP proof""#]))
        #expect(asks([#"Bearer realm="x", DPoP error="use_dpop_nonce""#]))
        #expect(!asks([#"Bearer error="use_dpop_nonce""#]))
        #expect(!asks([#"DPoP error="invalid_token""#]))
        #expect(!asks([]))
    }
}
