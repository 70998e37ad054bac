import Foundation
import Testing

@testable import AuthKit

/// Where `credential aws` sends the id_token: STS as the AWS SDKs find it, but never to a
/// host that `AWS_ENDPOINT_URL` names for every service (an S3 look-alike's), which could use
/// the id_token to take the role.
@Suite struct STSWebIdentityTests {
    static func endpoint(_ environment: [String: String]) -> String? {
        (try? STSWebIdentity.endpoint(environment: environment))?.absoluteString
    }

    /// The region is checked for every use, an STS named by its URL included: it is also a word
    /// of the stored credentials' kind, which `logout --account` must read back.
    @Test func theRegionIsARegionName() throws {
        #expect(try STSWebIdentity.region(environment: ["AWS_DEFAULT_REGION": "us-east-2"]) == "us-east-2")
        #expect(try STSWebIdentity.region(environment: ["AWS_REGION": ""]) == nil)
        for region in ["eu west 1", "eu-west-1\n", "a/b", String(repeating: "a", count: 33)] {
            #expect(throws: STSWebIdentity.Failure.self) { _ = try STSWebIdentity.region(environment: ["AWS_REGION": region]) }
        }
    }

    @Test func theIDTokenGoesOnlyToAnSTS() {
        #expect(Self.endpoint([:]) == "https://sts.amazonaws.com/")
        #expect(Self.endpoint(["AWS_REGION": "eu-west-1"]) == "https://sts.eu-west-1.amazonaws.com/")
        #expect(Self.endpoint(["AWS_ENDPOINT_URL_STS": "https://sts.example.com"]) == "https://sts.example.com")
        #expect(Self.endpoint(["AWS_ENDPOINT_URL": "http://127.0.0.1:4566"]) == "http://127.0.0.1:4566")
        #expect(Self.endpoint(["AWS_ENDPOINT_URL": "https://sts.us-east-2.amazonaws.com"]) == "https://sts.us-east-2.amazonaws.com")
        // Every service's endpoint, not AWS's: refused, saying how to name an STS.
        #expect(throws: STSWebIdentity.Failure.self) {
            _ = try STSWebIdentity.endpoint(environment: ["AWS_ENDPOINT_URL": "https://account.r2.cloudflarestorage.com"])
        }
        #expect(
            Self.endpoint([
                "AWS_ENDPOINT_URL": "https://account.r2.cloudflarestorage.com", "AWS_ENDPOINT_URL_STS": "https://sts.amazonaws.com",
            ])
                == "https://sts.amazonaws.com")
        // As for the SDKs: configured endpoints ignored.
        #expect(
            Self.endpoint(["AWS_ENDPOINT_URL_STS": "https://sts.example.com", "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS": "true"])
                == "https://sts.amazonaws.com/")
    }
}
