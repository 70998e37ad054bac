import Foundation
import TestSupport
import Testing

/// The start-up tricks that stay (docs/architecture.md, "The start-up of `authkit token`"):
/// libcrypto and libcurl are opened on first use, so a command that needs neither (`authkit
/// token` with a valid stored token) never loads them. Neither may creep back into the link.
@Suite struct StartupTests {
    @Test func libcryptoAndLibcurlAreNotLinkedButOpenedOnFirstUse() throws {
        let ldd = try ProcessRunner.run(
            URL(fileURLWithPath: "/usr/bin/ldd"), [TestPaths.product("authkit").path], environment: [:], timeout: 30)
        #expect(ldd.status == 0, "\(ldd.stderr)")
        #expect(ldd.stdout.contains("libsecret"), "\(ldd.stdout)")
        #expect(!ldd.stdout.contains("libcrypto"), "libcrypto must stay out of every start: \(ldd.stdout)")
        #expect(!ldd.stdout.contains("libcurl"), "libcurl must stay out of every start: \(ldd.stdout)")
    }
}
