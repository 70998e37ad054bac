import Foundation
import Testing

@testable import AuthKit

/// `ItemKind` (Sources/AuthKit/Session/ItemKind.swift): each kind an owner stores parses back to
/// itself; a kind nobody here knows, or a malformed AWS key, parses to nothing (and is left alone).
@Suite struct ItemKindTests {
    @Test func everyKindParsesBackAndOthersAreUnknown() throws {
        let endpoint = try #require(URL(string: "https://sts.amazonaws.com/"))
        let kinds: [ItemKind] = [
            .tokens, .currentAccount,
            .awsCredentials(
                .init(roleARN: "arn:aws:iam::123456789012:role/ci", durationSeconds: 900, endpoint: endpoint, region: "eu-west-1")),
            .awsCredentials(.init(roleARN: "arn:aws:iam::123456789012:role/ci", durationSeconds: nil, endpoint: endpoint, region: nil)),
        ]
        for kind in kinds { #expect(ItemKind(stored: kind.stored) == kind, "\(kind.stored)") }
        #expect(ItemKind.tokens.stored == "tokens" && ItemKind.currentAccount.stored == "current-account", "the stored names never change")
        #expect(!ItemKind.tokens.isDerived && ItemKind.currentAccount.isDerived && kinds[2].isDerived)
        for unknown in [
            "", "token", "aws-sts", "aws-sts  duration=1 endpoint=https://x region=-", "aws-sts r duration=x endpoint=https://x region=-",
            "aws-sts r duration=1 endpoint=https://x", "aws-sts r duration=1 endpoint=https://x region=- more",
        ] {
            #expect(ItemKind(stored: unknown) == nil, "\(unknown)")
        }
        // What goes with a sign-in: every derived kind, and ours that no longer parse (a region
        // with a space, written by an older authkit) rather than outlive it; never the record
        // itself or a kind nobody here knows.
        #expect(ItemKind.isDerived(stored: kinds[2].stored) && ItemKind.isDerived(stored: "current-account"))
        #expect(ItemKind.isDerived(stored: "aws-sts r duration=default endpoint=http://127.0.0.1:4566/ region=eu west 1"))
        #expect(ItemKind.isDerived(stored: "dpop-key short"))
        #expect(!ItemKind.isDerived(stored: "tokens") && !ItemKind.isDerived(stored: "token") && !ItemKind.isDerived(stored: "aws-sts"))
    }
}
