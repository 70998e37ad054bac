import Foundation
import TestSupport
import Testing

/// The start-up tricks that stay (docs/decisions.md, "The start-up of `authkit token`" and
/// "The agent's figures"): libcrypto, libcurl and libsecret are opened on first use, so a
/// command that needs none of them (`authkit token` answered by the agent) never loads them.
/// None may creep back into the link.
@Suite struct StartupTests {
    @Test func libcryptoLibcurlAndLibsecretAreNotLinkedButOpenedOnFirstUse() throws {
        let ldd = try ProcessRunner.run(
            URL(fileURLWithPath: "/usr/bin/ldd"), [TestPaths.product("authkit").path], environment: [:], timeout: 30)
        #expect(ldd.status == 0, "\(ldd.stderr)")
        #expect(!ldd.stdout.contains("libsecret"), "libsecret is opened when the Secret Service is used: \(ldd.stdout)")
        #expect(!ldd.stdout.contains("libglib") && !ldd.stdout.contains("libgio"), "nor GLib or GIO: \(ldd.stdout)")
        #expect(!ldd.stdout.contains("libcrypto"), "libcrypto must stay out of every start: \(ldd.stdout)")
        #expect(!ldd.stdout.contains("libcurl"), "libcurl must stay out of every start: \(ldd.stdout)")
    }
}
